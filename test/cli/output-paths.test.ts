/**
 * Output paths behave the same on every command (issue 26, newcomer points): an existing folder
 * gets the generated name inside it, `DIR/` names a folder and never becomes a file called DIR, a
 * missing parent folder is a usage error (exit 2) before any device work, and nothing is created
 * where the path was wrong. Through the real CLI process against the real daemon on the Mock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson, tempCwd } from "./run.ts";

async function oneSession(env: Record<string, string>): Promise<string> {
  expect((await cli(["tap", "10", "10"], env)).code).toBe(0);
  return (await cliJson(["sessions"], env)).sessions[0].id as string;
}
const actionsRecorded = async (env: Record<string, string>) =>
  (await cliJson(["sessions"], env)).sessions.length as number;

describe("output paths on every command", () => {
  test("DIR/ that does not exist is a usage error for screenshot, report and --junit, before any device work, and writes nothing", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const id = await oneSession(env);
    const cwd = tempCwd();
    for (const args of [
      ["screenshot", "-o", "shots/"],
      ["report", id, "-o", "out/"],
      ["report", id, "--junit", "j/"],
    ]) {
      const r = await cli(args, env, cwd);
      const folder = join(cwd, (args.at(-1) as string).slice(0, -1));
      expect([args, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([
        args,
        2,
        "",
        `devicerail: cannot write ${args.at(-1)}: the folder ${folder} does not exist`,
      ]);
    }
    expect(readdirSync(cwd)).toEqual([]);
    // The screenshot never started a Session: the one from the tap is all there is.
    expect(await actionsRecorded(env)).toBe(1);
  });

  test("an existing folder, with or without the slash, gets the generated name inside it", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const id = await oneSession(env);
    const cwd = tempCwd();
    mkdirSync(join(cwd, "out"));
    const shot = await cliJson(["screenshot", "-o", "out/"], env, cwd);
    expect(shot.file.startsWith(`${join(cwd, "out")}/screenshot-`) && /-\d{8}-\d{6}\.png$/.test(shot.file)).toBe(true);
    expect(statSync(shot.file).isFile()).toBe(true);
    const report = await cliJson(["report", id, "-o", "out"], env, cwd);
    expect(report.html.file).toBe(join(cwd, "out", `devicerail-report-${id}.html`));
    const junit = await cliJson(["report", id, "--junit", "out/"], env, cwd);
    expect(junit.junit.file).toBe(join(cwd, "out", "devicerail-junit.xml"));
    const exported = await cliJson(["export", id, "-o", "out"], env, cwd);
    expect(exported.dir).toBe(join(cwd, "out", `devicerail-session-${id}`));
    expect(statSync(join(exported.dir, "manifest.json")).isFile()).toBe(true);
  });

  test("export: a new folder only inside one that exists; a file in the way is a usage error", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const id = await oneSession(env);
    const cwd = tempCwd();
    writeFileSync(join(cwd, "a-file"), "x");
    for (const [out, message] of [
      [
        "nope/deeper/x",
        `devicerail: cannot write nope/deeper/x: the folder ${join(cwd, "nope/deeper")} does not exist`,
      ],
      ["a-file", `devicerail: cannot write a-file: ${join(cwd, "a-file")} is a file, not a folder`],
    ] as const) {
      const r = await cli(["export", id, "-o", out], env, cwd);
      expect([out, r.code, r.stdout, r.stderr.split("\n")[0]]).toEqual([out, 2, "", message]);
    }
    expect(existsSync(join(cwd, "nope"))).toBe(false);
    const made = await cliJson(["export", id, "-o", "new"], env, cwd);
    expect(made.dir).toBe(join(cwd, "new"));
  });
});
