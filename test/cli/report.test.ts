import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson, sha256 } from "./run.ts";

/** Two recorded Sessions on a fresh data directory: a tap, and a failed element tap. */
async function twoSessions(): Promise<{ env: Record<string, string>; ids: string[] }> {
  const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
  expect((await cli(["tap", "640", "148"], env)).code).toBe(0);
  expect((await cli(["tap", "--id", "no_such_button"], env)).code).toBe(1);
  const { sessions } = await cliJson<{ sessions: { id: string }[] }>(["sessions"], env);
  return { env, ids: sessions.map((s) => s.id).reverse() };
}

describe("devicerail report", () => {
  test("writes one Session as an HTML file holding its events, screenshots and the page, and says where", async () => {
    const { env, ids } = await twoSessions();
    const dir = tempDataDir();
    const out = await cliJson<{ html: { file: string; bytes: number; events: number; screenshots: number } }>(
      ["report", ids[0] as string, "-o", dir],
      env,
    );
    expect(out.html).toEqual({
      file: join(dir, `devicerail-report-${ids[0]}.html`),
      bytes: statSync(out.html.file).size,
      events: 4,
      screenshots: 2,
    });
    const html = readFileSync(out.html.file, "utf8");
    expect(html).toStartWith("<!doctype html>");
    expect(html).toContain(`"id":"${ids[0]}"`);
    expect(html).toContain("data:image/jpeg;base64,");
    expect(html).not.toMatch(/(src|href)=["']https?:/);
  }, 30_000);

  test("writes JUnit XML for several Sessions, named or --since, with the screenshots beside it", async () => {
    const { env, ids } = await twoSessions();
    const file = join(tempDataDir(), "results.xml");
    const named = await cliJson<{ junit: { file: string; attachments: number; sessions: number } }>(
      ["report", ...ids, "--junit", file],
      env,
    );
    expect(named.junit).toEqual({ file, attachments: 2, sessions: 2 });
    const xml = readFileSync(file, "utf8");
    expect(xml.match(/<testsuite /g)?.length).toBe(2);
    // The CLI ends a Session whose command failed as failed, with the error as its reason.
    expect(xml).toContain(
      '<failure message="device.execute failed: JSON-RPC error -32000 element_not_found: element was not found" type="session.failed">',
    );
    expect(xml).toContain("#3 tapElement failed: element_not_found: element was not found");
    const attached = [...xml.matchAll(/\[\[ATTACHMENT\|([^\]]+)\]\]/g)].map((m) => m[1] as string);
    expect(attached.length).toBe(2);
    for (const path of attached)
      expect([
        path.startsWith(join(file, "..", "results-attachments")),
        existsSync(path),
        sha256(readFileSync(path)) === path.slice(-68, -4),
      ]).toEqual([true, true, true]);
    const since = await cliJson<{ junit: { sessions: number } }>(["report", "--since", "1h", "--junit", file], env);
    expect(since.junit.sessions).toBe(2);
  }, 30_000);

  test("refuses what it cannot do with a usage error or the daemon's answer", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const cases: [string[], number, string][] = [
      [["report"], 2, "devicerail: name a Session (devicerail sessions lists them), or give --since AGE with --junit"],
      [
        ["report", "a", "b"],
        2,
        "devicerail: an HTML report is of one Session; for several, write JUnit with --junit FILE",
      ],
      [
        ["report", "--since", "soon", "--junit", "x.xml"],
        2,
        "devicerail: option '--since <age>' argument 'soon' is invalid. expected an age such as 7d, 12h or 30m",
      ],
      [
        ["report", "00000000-0000-4000-8000-000000000000"],
        1,
        "devicerail: no Session 00000000-0000-4000-8000-000000000000; devicerail sessions lists them",
      ],
    ];
    for (const [args, code, message] of cases) {
      const r = await cli(args, env);
      expect([args, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([args, code, "", message]);
    }
  }, 30_000);
});
