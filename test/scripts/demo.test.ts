import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, tempDataDir } from "../support/daemon.ts";

describe("scripts/demo.ts", () => {
  test("signs in on the Mock app, sees the sync finish and exits 0 when run as the README's main job", async () => {
    const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/demo.ts")], {
      cwd: ROOT,
      env: { ...process.env, DEVICERAIL_DATA_DIR: tempDataDir(), NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    const summary = out.slice(out.indexOf("What happened"));
    expect(summary).toContain("negotiated protocol 1.5 with 8 features");
    expect(summary).toContain("signed in (now on home), sync seen done, verdict recorded");
    expect(summary).toContain("daemon exited with code 0 after end of input");
  });
});
