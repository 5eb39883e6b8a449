/**
 * Commands are data (command-specs.ts) run with injected output: the same runCli the executable
 * calls, in this process, its stdout and stderr captured. Only commands that reach no daemon run
 * here; the rest are tested through the real CLI process.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { runCli } from "../../src/cli/program.ts";
import { COMMANDS } from "../../src/cli/command-specs.ts";
import { VERSION } from "../../src/server/version.ts";
import { tempDataDir } from "../support/daemon.ts";

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const saved = process.env.DEVICERAIL_DATA_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.DEVICERAIL_DATA_DIR;
  else process.env.DEVICERAIL_DATA_DIR = saved;
});

describe("the CLI in-process", () => {
  test("--version and --help print to the injected stdout", async () => {
    expect(await run(["--version"])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith(`devicerail ${VERSION} — drive phones`);
  });

  test("every command of the table is one the program knows, with its own --help", async () => {
    for (const spec of COMMANDS) {
      const r = await run([...spec.path, "--help"]);
      expect([spec.path.join(" "), r.code]).toEqual([spec.path.join(" "), 0]);
      expect(r.stdout).toContain(spec.help ? "Usage: devicerail serve" : spec.summary.slice(0, 40));
    }
  });

  test("a usage error is exit 2, with the one --json error shape on stdout and the text on stderr", async () => {
    const r = await run(["swipe", "1", "2", "3", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing required argument 'y2'");
    const { error } = JSON.parse(r.stdout);
    expect(error.data.code).toBe("usage_error");
    expect(error.message).toContain("missing required argument 'y2'");
    expect((await run(["sessions", "--limit", "3", "--follow"])).code).toBe(2);
    expect((await run(["tap", "x"])).stderr).toContain("expected an integer");
  });

  test("daemon status on a data directory without a daemon is exit 3, and says so in --json", async () => {
    process.env.DEVICERAIL_DATA_DIR = tempDataDir();
    const r = await run(["daemon", "status", "--json"]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toEqual(expect.objectContaining({ running: false }));
  });
});
