/**
 * `devicerail type --secret`: the value comes from stdin or a prompt that does not echo, runs as
 * the protected inputSecret, and is found nowhere afterwards: not in the command's output, the
 * daemon's log, the event store, the evidence or an export.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { filesUnder } from "../support/canary.ts";
import { daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { cli, cliJson, tempCwd } from "./run.ts";

const SECRET = "s3cret-Horse-battery";

/** Every file under `dir` that holds `needle` (as bytes: the database, its WAL and the evidence included). */
function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  // Regular files only: the data directory also holds the daemon's socket.
  return filesUnder(dir).filter((path) => statSync(path).isFile() && readFileSync(path).includes(bytes));
}

describe("devicerail type --secret", () => {
  test("reads stdin, types through inputSecret into the field, signs in, and the secret is stored and shown nowhere", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_LOG_LEVEL: "debug" };
    expect((await cli(["type", "alice", "--into", "--id", "username"], env)).code).toBe(0);
    const typed = await cli(["type", "--secret", "--into", "--id", "password"], env, tempCwd(), `${SECRET}\n`);
    expect([typed.code, typed.stderr]).toEqual([0, ""]);
    expect(typed.stdout).toStartWith("ok type a secret into --id password on mock-1 (tapElement + inputSecret, ");
    expect(typed.stdout).toContain('element: SecureTextField "Password" #password [400,192,480,56] [password]');
    expect(typed.stdout).not.toContain(SECRET);
    expect((await cli(["tap", "--id", "sign_in"], env)).code).toBe(0);
    const ui = await cliJson(["ui"], env);
    expect(ui.nodes.find((n: { identifier?: string }) => n.identifier === "title").text).toBe("Welcome, alice");

    // The Session's events record the call as protected, without its value.
    const sessionId = /session ([0-9a-f-]{36})\)/.exec(typed.stdout)?.[1] as string;
    const out = join(tempCwd(), "export");
    expect((await cli(["export", sessionId, "-o", out], env)).code).toBe(0);
    const events = readFileSync(join(out, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const started = events.filter((e) => e.payload.type === "actionStarted").map((e) => e.payload.call);
    expect(
      started.map((c) => [c.name, c.arguments === null ? null : Object.keys(c.arguments), c.argumentsRedacted]),
    ).toEqual([
      ["tapElement", ["target"], undefined],
      ["inputSecret", null, true],
    ]);
    expect([filesHolding(env.DEVICERAIL_DATA_DIR, SECRET), filesHolding(out, SECRET)]).toEqual([[], []]);
    // The stored log is readable text: the check above is not blind to it.
    expect(filesHolding(env.DEVICERAIL_DATA_DIR, "alice").length).toBeGreaterThan(0);
  }, 30_000);

  test("without --into it types into the focused field; --json prints the ActionResult, without the value", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    expect((await cli(["tap", "640", "220"], env)).code).toBe(0);
    const r = await cli(["type", "--secret", "--json"], env, tempCwd(), SECRET);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).output).toEqual({ accepted: true });
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  }, 30_000);

  test("a value on the command line, an empty stdin, and no text at all are usage errors (exit 2) before any device work", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    const cases: [string[], string | undefined, string][] = [
      [
        ["type", SECRET, "--secret"],
        undefined,
        "devicerail: --secret takes the text from stdin or a prompt, never from the command line (other users can read a command's arguments)\n",
      ],
      [["type", "--secret"], "", "devicerail: type --secret read nothing from stdin\n"],
      [["type", "--secret"], "\n", "devicerail: type --secret read nothing from stdin\n"],
      [
        ["type"],
        undefined,
        "devicerail: missing the text to type: devicerail type TEXT (or --secret to read it from stdin)\n",
      ],
    ];
    for (const [args, input, message] of cases) {
      const r = await cli(args, env, tempCwd(), input);
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 2, "", message]);
    }
    expect(await cliJson(["sessions"], env)).toEqual({ sessions: [] });
  }, 30_000);

  test("at a terminal it prompts on stderr, echoes nothing of what is typed, and takes Backspace", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
    expect((await cli(["tap", "640", "220"], env)).code).toBe(0);
    // script(1) gives the command a pseudo-terminal; its stdin is what is typed there.
    const command = daemonCommand(["type", "--secret"])
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
      .join(" ");
    const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], {
      env: daemonEnv(env),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    let shown = "";
    while (!shown.includes("secret (not shown): ")) {
      const { value, done } = await reader.read();
      if (done) break;
      shown += new TextDecoder().decode(value);
    }
    expect(shown).toContain("secret (not shown): ");
    // "X" then Backspace: only SECRET is typed.
    proc.stdin.write(`X\u007f${SECRET}\r`);
    await proc.stdin.flush();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      shown += new TextDecoder().decode(value);
    }
    expect(await proc.exited).toBe(0);
    expect(shown).toContain("type a secret on mock-1 (inputSecret, ");
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain("X");
  }, 30_000);
});
