/**
 * What a person at a terminal sees and does: the spinner on waits over a second, and Ctrl-C, which
 * cancels the call in the daemon and ends its Session (a second one quits at once). The commands
 * run under script(1)'s pseudo-terminal; bytes written to script's stdin reach the command as
 * typed keys, so \x03 is a real Ctrl-C from the terminal's line discipline.
 */
import { describe, expect, test } from "bun:test";
import { daemonCommand, daemonEnv, tempDataDir } from "../support/daemon.ts";
import { cliJson } from "./run.ts";

const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;

/** `devicerail ARGS` on a pseudo-terminal; `output` accumulates what the terminal shows. */
function onTerminal(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn(["script", "-qefc", daemonCommand(args).map(quote).join(" "), "/dev/null"], {
    env: daemonEnv(env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const t = { proc, output: "", waiters: [] as (() => void)[] };
  void (async () => {
    for await (const chunk of proc.stdout) {
      t.output += new TextDecoder().decode(chunk);
      for (const w of t.waiters.splice(0)) w();
    }
  })();
  const shows = async (text: string, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (!t.output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`the terminal never showed ${JSON.stringify(text)}:\n${t.output}`);
      await new Promise<void>((r) => {
        t.waiters.push(r);
        setTimeout(r, 100);
      });
    }
  };
  const type = (keys: string) => {
    proc.stdin.write(keys);
    proc.stdin.flush();
  };
  return { proc, shows, type, output: () => t.output };
}

describe("devicerail at a terminal", () => {
  test("a wait over a second shows a spinner with the elapsed time, and --timeout ends it with a clear error", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK_HANG: "execute" };
    const t = onTerminal(["tap", "1", "1", "--timeout", "2s"], env);
    await t.shows("device.execute…");
    expect(await t.proc.exited).toBe(1);
    expect(t.output()).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] device\.execute… \d\.\d s/);
    expect(t.output()).toContain("request_timed_out");
    const { sessions } = await cliJson(["sessions"], { DEVICERAIL_DATA_DIR: env.DEVICERAIL_DATA_DIR });
    expect([sessions[0].outcome, sessions[0].errors]).toEqual(["failed", 1]);
  }, 30_000);

  test("Ctrl-C cancels the call in the daemon, ends its Session as cancelled and exits 130", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK_HANG: "execute" };
    const t = onTerminal(["tap", "1", "1"], env);
    await t.shows("device.execute…");
    t.type("\x03");
    expect(await t.proc.exited).toBe(130);
    expect(t.output()).toContain("cancelling… (Ctrl-C again to quit now)");
    expect(t.output()).not.toContain("    at ");
    const { sessions } = await cliJson(["sessions"], { DEVICERAIL_DATA_DIR: env.DEVICERAIL_DATA_DIR });
    expect(sessions[0]).toMatchObject({
      state: "ended",
      outcome: "cancelled",
      reason: "interrupted by the user",
      actions: 1,
      errors: 1,
    });
  }, 30_000);

  test("a second Ctrl-C quits at once, and the daemon still ends the Session when the connection drops", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK_HANG: "all" };
    const t = onTerminal(["screenshot", "-o", `${tempDataDir()}/x.png`], env);
    await t.shows("device.observe…");
    t.type("\x03");
    await t.shows("cancelling…");
    t.type("\x03");
    expect(await t.proc.exited).toBe(130);
    const deadline = Date.now() + 10_000;
    let sessions: { state: string; outcome: string | null }[] = [];
    do ({ sessions } = await cliJson(["sessions"], { DEVICERAIL_DATA_DIR: env.DEVICERAIL_DATA_DIR }));
    while (sessions[0]?.state !== "ended" && Date.now() < deadline);
    expect(sessions[0]?.state).toBe("ended");
  }, 30_000);
});
