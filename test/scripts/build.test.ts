import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { gitCommit } from "../../scripts/build.ts";
import { ROOT, helloParams, tempDataDir } from "../support/daemon.ts";

// Each build writes a ~110 MiB executable: removed as soon as this file is done.
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const build = (args: string[]) =>
  Bun.spawnSync([process.execPath, join(ROOT, "scripts/build.ts"), ...args], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: process.env,
  });

describe("scripts/build.ts", () => {
  test("builds a linux-x64 binary stamped with version and commit that serves from an empty directory, with SHA256SUMS", async () => {
    const outdir = tempDir("devicerail-build-");
    const b = build(["--target", "linux-x64", "--outdir", outdir]);
    expect(b.stderr.toString()).not.toContain("FAILED");
    expect(b.exitCode).toBe(0);
    expect(readdirSync(outdir).sort()).toEqual(["SHA256SUMS", "devicerail-linux-x64"]);

    const bin = join(outdir, "devicerail-linux-x64");
    const digest = createHash("sha256").update(readFileSync(bin)).digest("hex");
    expect(readFileSync(join(outdir, "SHA256SUMS"), "utf8")).toBe(`${digest}  devicerail-linux-x64\n`);

    const commit = gitCommit();
    expect(commit).toMatch(/^(?:[0-9a-f]{4,40}|unknown)$/);
    const expected = `${pkg.version}+${commit}`;
    const v = Bun.spawnSync([bin, "--version"], { stdout: "pipe", stderr: "pipe" });
    expect(v.exitCode).toBe(0);
    expect(v.stdout.toString()).toBe(`${expected}\n`);

    // Alone in an empty directory, run from there: nothing beside it, nothing read from the checkout.
    const alone = tempDir("devicerail-alone-");
    copyFileSync(bin, join(alone, "devicerail"));
    Bun.spawnSync(["chmod", "+x", join(alone, "devicerail")]);
    const proc = Bun.spawn([join(alone, "devicerail"), "serve"], {
      cwd: alone,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: {
        ...process.env,
        DEVICERAIL_DATA_DIR: tempDataDir(),
        DEVICERAIL_ANDROID: "off",
        DEVICERAIL_LOG_LEVEL: "warn",
      },
    });
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() })}\n`);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "devices.list" })}\n`);
    proc.stdin.end();
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const [hello, list] = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(hello.result.server).toEqual({ name: "devicerail-daemon", version: expected });
    expect(hello.result.protocol.selected).toEqual({ major: 1, minor: 5 });
    expect(list.result.devices.map((d: { id: string }) => d.id)).toEqual(["mock-1"]);
    expect(readdirSync(alone)).toEqual(["devicerail"]);

    // The binary against a daemon run from the same checkout's source: the same devicerail, so
    // no "the running devicerail daemon is version …" warning (a source run has no commit stamp).
    const env = {
      ...process.env,
      DEVICERAIL_DATA_DIR: tempDataDir(),
      DEVICERAIL_ANDROID: "off",
      DEVICERAIL_IOS: "off",
    };
    const source = (args: string[]) =>
      Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], {
        cwd: ROOT,
        env,
        stdout: "pipe",
        stderr: "pipe",
      });
    expect(source(["daemon", "start"]).exitCode).toBe(0);
    try {
      const devices = Bun.spawnSync([bin, "devices"], { cwd: alone, env, stdout: "pipe", stderr: "pipe" });
      expect([devices.exitCode, devices.stderr.toString(), devices.stdout.toString()]).toEqual([
        0,
        "",
        expect.stringContaining("mock-1"),
      ]);
    } finally {
      source(["daemon", "stop"]);
    }
  }, 120_000);

  test("an unknown target is refused with exit 2, naming it", () => {
    const b = build(["--target", "plan9-mips", "--outdir", tempDir("devicerail-build-")]);
    expect(b.exitCode).toBe(2);
    expect(b.stderr.toString()).toContain("unknown target(s) plan9-mips");
  });
});
