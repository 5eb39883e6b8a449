import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../support/wait.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];
const folders = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.startsWith("devicerail-http-"))
    .sort();

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
      // An earlier version's folder (no pid in its name) without a listening socket is reclaimed too;
      // a name no daemon makes is never touched.
      mkdirSync(join(tmp, "devicerail-http-Ab12Cd"));
      mkdirSync(join(tmp, "devicerail-http-other-name"));
      // A pid that is no process here (as in another PID namespace sharing the directory) whose socket still answers.
      const foreign = "devicerail-http-4194399-Zz99Yy";
      mkdirSync(join(tmp, foreign), { mode: 0o700 });
      const probed = Promise.withResolvers<void>();
      using listener = Bun.listen({
        unix: join(tmp, foreign, "http.sock"),
        socket: { open: () => probed.resolve(), data: () => {} },
      });
      expect(listener.unix).toBe(join(tmp, foreign, "http.sock"));
      expect(folders(tmp)).toEqual(
        [...liveFolder, ...killedFolder, "devicerail-http-Ab12Cd", "devicerail-http-other-name", foreign].sort(),
      );

      await using next = await ServeDaemon.start(LISTEN, env);
      const nextFolder = folders(tmp).filter((n) => n.startsWith(`devicerail-http-${next.proc.pid}-`));
      // Reclaiming runs beside the start-up: it asks each dead folder's socket first.
      await probed.promise;
      await until("the dead folders reclaimed", () => folders(tmp).length === 4);
      expect(folders(tmp)).toEqual([...liveFolder, ...nextFolder, "devicerail-http-other-name", foreign].sort());
      expect(readdirSync(join(tmp, liveFolder[0] as string))).toEqual(["http.sock"]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
