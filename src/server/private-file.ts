import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Replaces `path` with `text` as a whole, readable by its owner only: written to a 0600 temporary
 * file beside it, synced, then renamed over it, so a reader sees the old content or the new, never
 * part of either.
 */
export function replacePrivateFile(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    unlinkSync(temp);
  } catch {}
  // "wx": a new file, so the 0600 mode is the one it is created with.
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}
