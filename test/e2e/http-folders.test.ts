import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServeDaemon } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];
const folders = (dir: string) => readdirSync(dir).filter((n) => n.startsWith("devicerail-http-")).sort();

describe("private HTTP socket folders", () => {
  test("a folder left by a daemon killed with SIGKILL is reclaimed at the next start while a live daemon's folder stays", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "devicerail-folders-"));
    try {
      const env = { TMPDIR: tmp };
      await using live = await ServeDaemon.start(LISTEN, env);
      const killed = await ServeDaemon.start(LISTEN, env);
      const liveFolder = folders(tmp).filter((n) => n.startsWith(`devicerail-http-${live.proc.pid}-`));
      const killedFolder = folders(tmp).filter((n) => n.startsWith(`devicerail-http-${killed.proc.pid}-`));
      expect([liveFolder.length, killedFolder.length]).toEqual([1, 1]);
      killed.proc.kill("SIGKILL");
      await killed.exited;
      await killed[Symbol.asyncDispose]();
      // Not a daemon's folder (no pid in its name): never touched.
      mkdirSync(join(tmp, "devicerail-http-other"));
      expect(folders(tmp)).toEqual([...liveFolder, ...killedFolder, "devicerail-http-other"].sort());

      await using next = await ServeDaemon.start(LISTEN, env);
      const nextFolder = folders(tmp).filter((n) => n.startsWith(`devicerail-http-${next.proc.pid}-`));
      expect(folders(tmp)).toEqual([...liveFolder, ...nextFolder, "devicerail-http-other"].sort());
      expect(readdirSync(join(tmp, liveFolder[0] as string))).toEqual(["http.sock"]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
