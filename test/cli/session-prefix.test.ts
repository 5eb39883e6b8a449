/**
 * Session ids on the command line (issue 26, newcomer points): every command that takes a Session
 * takes an unambiguous prefix of its id, as git takes a commit's, and `sessions --limit N` lists
 * only the newest N. Through the real CLI process against the real daemon on the Mock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson, tempCwd } from "./run.ts";

/** Three recorded Sessions (one tap each), newest first as `sessions` lists them. */
async function threeSessions(env: Record<string, string>): Promise<string[]> {
  for (let i = 0; i < 3; i++) expect((await cli(["tap", "10", String(10 + i)], env)).code).toBe(0);
  const { sessions } = await cliJson(["sessions"], env);
  return sessions.map((s: { id: string }) => s.id);
}

/** The shortest prefix of `id` that no other id shares, with at least `min` characters. */
const shortest = (id: string, all: string[], min = 4) => {
  for (let n = min; n <= id.length; n++)
    if (all.filter((x) => x.startsWith(id.slice(0, n))).length === 1) return id.slice(0, n);
  return id;
};

describe("Session ids and prefixes on the command line", () => {
  test("export, report and sessions --follow take a unique prefix and use the whole id", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const ids = await threeSessions(env);
    const [newest] = ids as [string];
    const prefix = shortest(newest, ids);
    const cwd = tempCwd();
    const exported = await cliJson(["export", prefix.toUpperCase()], env, cwd);
    expect([exported.session.id, exported.dir]).toEqual([newest, join(cwd, `devicerail-session-${newest}`)]);
    const report = await cliJson(["report", prefix], env, cwd);
    expect(report.html.file).toBe(join(cwd, `devicerail-report-${newest}.html`));
    expect(existsSync(join(cwd, `devicerail-report-${newest}.html`))).toBe(true);
    // An ended Session is replayed whole and --follow returns at its terminal.
    const follow = await cli(["sessions", "--follow", prefix, "--json"], env);
    expect([
      follow.code,
      follow.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).sessionId),
    ]).toEqual([0, expect.arrayContaining([newest])]);
  });

  test("a prefix that names no Session exits 1, one too short or not hex exits 2, both before anything is written", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const ids = await threeSessions(env);
    const none = ["0000", "1111", "ffff"].find((p) => !ids.some((id) => id.startsWith(p))) as string;
    const cwd = tempCwd();
    for (const [args, code, message] of [
      [["export", none], 1, `devicerail: no Session starts with ${none}; devicerail sessions lists them`],
      [["report", none], 1, `devicerail: no Session starts with ${none}; devicerail sessions lists them`],
      [
        ["export", "abc"],
        2,
        'devicerail: "abc" is not a Session id: give the id devicerail sessions lists, or its first 4 or more characters',
      ],
      [
        ["report", "last-one"],
        2,
        'devicerail: "last-one" is not a Session id: give the id devicerail sessions lists, or its first 4 or more characters',
      ],
    ] as const) {
      const r = await cli([...args], env, cwd);
      expect([args, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([args, code, "", message]);
    }
    expect(existsSync(join(cwd, `devicerail-session-${none}`))).toBe(false);
  });

  test("an ambiguous prefix is a usage error listing the Sessions it names", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    // Enough Sessions that two of them share their first 4 characters is unlikely; find a shared
    // prefix among the ids instead, or make one: the ids differ, so the longest common prefix of
    // two sorted neighbours is shared by both.
    await threeSessions(env);
    const ids = (await threeSessions(env)).sort();
    expect(new Set(ids).size).toBe(6);
    const pairs = ids.slice(1).map((id, i) => {
      const prev = ids[i] as string;
      let n = 0;
      while (n < id.length && prev[n] === id[n]) n++;
      return { n, prefix: id.slice(0, n), ids: [prev, id] };
    });
    const shared = pairs.filter((p) => p.n >= 4).sort((a, b) => b.n - a.n)[0];
    // Random ids rarely share 4 hex characters: then the check is of the empty-prefix rule only.
    if (!shared) {
      const r = await cli(["export", ""], env);
      expect([r.code, r.stderr.split("\n")[0]]).toEqual([
        2,
        'devicerail: "" is not a Session id: give the id devicerail sessions lists, or its first 4 or more characters',
      ]);
      return;
    }
    const r = await cli(["export", shared.prefix], env);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      expect.stringMatching(
        new RegExp(
          `^devicerail: ${shared.prefix} names \\d+ Sessions \\(.*${shared.ids[0]}.*\\): give more of the id$`,
        ),
      ),
    ]);
  });

  test("sessions --limit N lists the newest N; --limit with --follow is a usage error", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const ids = await threeSessions(env);
    expect((await cliJson(["sessions", "--limit", "2"], env)).sessions.map((s: { id: string }) => s.id)).toEqual(
      ids.slice(0, 2),
    );
    const text = await cli(["sessions", "--limit", "1"], env);
    expect(
      text.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("\t")[0]),
    ).toEqual([ids[0]]);
    for (const [args, message] of [
      [
        ["sessions", "--limit", "0"],
        "devicerail: option '--limit <n>' argument '0' is invalid. expected an integer from 1 to 1000",
      ],
      [
        ["sessions", "--limit", "2", "--follow"],
        "devicerail: --limit belongs to the listing, not to --follow or --open",
      ],
    ] as const) {
      const r = await cli([...args], env);
      expect([r.code, r.stderr.split("\n")[0]]).toEqual([2, message]);
    }
  });
});
