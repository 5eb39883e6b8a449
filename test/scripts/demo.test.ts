import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import { ADB_PATH } from "../support/adb-device/index.ts";
import { ROOT, tempDataDir } from "../support/daemon.ts";
import { isAlive, readRecord } from "../../src/server/daemon-record.ts";

/** A port nothing listens on now, for an adb server only this test uses. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("scripts/demo.ts", () => {
  test("signs in on the Mock app, sees the sync finish and exits 0 when run as the README's main job", async () => {
    // As a user runs it: Android on auto, so the daemon starts an adb server when adb is
    // installed; here on a private port, so the machine's own server (5037) is left alone.
    const adbPort = await freePort();
    const dataDir = tempDataDir();
    const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/demo.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        DEVICERAIL_DATA_DIR: dataDir,
        NO_COLOR: "1",
        DEVICERAIL_ANDROID: "auto",
        ANDROID_ADB_SERVER_PORT: String(adbPort),
        DEVICERAIL_ADB_PATH: ADB_PATH,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    Bun.spawnSync([ADB_PATH, "-P", String(adbPort), "kill-server"]);
    expect(code).toBe(0);
    const summary = out.slice(out.indexOf("What happened"));
    expect(summary).toContain("negotiated protocol 1.5 with 8 features");
    expect(summary).toContain("signed in (now on home), sync seen done, verdict recorded");
    expect(summary).toContain("daemon exited with code 0 after end of input");
    // The screenshot it names is the exported PNG of the last observation, named by its digest.
    const shot = /last screenshot: (\S+\/export\/evidence\/([0-9a-f]{64})\.png) \(a PNG/.exec(summary);
    expect(shot?.[1]?.startsWith(join(dataDir, "export"))).toBe(true);
    const bytes = new Uint8Array(readFileSync(shot?.[1] as string));
    expect([
      new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
      Buffer.from(bytes.subarray(1, 4)).toString(),
    ]).toEqual([shot?.[2] as string, "PNG"]);
    // Nothing left running: the daemon export started in the background was stopped.
    const record = readRecord(dataDir);
    expect(record === null || !isAlive(record.pid)).toBe(true);
  });
});
