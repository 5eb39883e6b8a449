import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../protocol/rpc-error.ts";

/** Each daemon's private HTTP socket lives in `<tmp>/devicerail-http-<pid>-XXXXXX/http.sock`. */
export const HTTP_FOLDER_PREFIX = "devicerail-http-";
/** With the owner's pid, or (folders of earlier versions) without one. */
const FOLDER = /^devicerail-http-(?:([1-9][0-9]{0,9})-)?[A-Za-z0-9]{6}$/;
/** A connect that neither succeeds nor fails in this time counts as a live owner. */
const CONNECT_MS = 1_000;

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists under another uid.
    return (err as { code?: string }).code !== "ESRCH";
  }
};

/** Whether something accepts connections on the socket; a refused or missing socket has no owner. */
async function answers(path: string): Promise<boolean> {
  const attempt = Bun.connect({
    unix: path,
    socket: { open: (s) => void s.end(), data: () => {}, error: () => {} },
  }).then(
    () => true,
    (err: { code?: string }) => !(err.code === "ECONNREFUSED" || err.code === "ENOENT"),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), CONNECT_MS);
  });
  try {
    return await Promise.race([attempt, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Removes the private socket folders of daemons that died without stopping (kill -9): only this
 * uid's own directories whose named pid no longer runs and whose socket no longer answers. Both
 * are asked because a pid can belong to another PID namespace sharing the same temporary
 * directory, where it looks dead from here while its daemon serves.
 */
export async function reclaimDeadFolders(parent: string, log: Logger): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = FOLDER.exec(name);
    if (!m || (m[1] !== undefined && (Number(m[1]) === process.pid || running(Number(m[1]))))) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (await answers(join(path, "http.sock"))) continue;
      rmSync(path, { recursive: true, force: true });
      log.debug({ path }, "removed a dead daemon's HTTP socket folder");
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}
