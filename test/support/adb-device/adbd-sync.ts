/**
 * The `sync:` service, protocol v1 (SYNC.TXT): STAT, LIST, RECV, SEND, QUIT. Enough for `adb
 * push`/`pull`/`ls` and adbkit's push/pull/stat/readdir. The v2 records (STA2, LIS2) are not
 * implemented, so `stat_v2`/`ls_v2` must not be advertised (adb push then aborts, exit 134).
 */
import type { AdbdStream } from "./adbd-stream.ts";
import { bytes, concat, text } from "./command-io.ts";
import { ByteQueue } from "./wire.ts";

export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
/** Largest DATA record either side may send. */
const SYNC_DATA_MAX = 64 * 1024;
const MAX_PATH = 1024;

export interface SyncStat {
  mode: number;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

export interface SyncFs {
  /** null when nothing exists at `path`. */
  stat(path: string): SyncStat | null;
  /** Entries of a directory (without `.` and `..`), or null when it is not one. */
  list(path: string): (SyncStat & { name: string })[] | null;
  read(path: string): Uint8Array | null;
  /** Stores a pushed file; returns an error message to send as FAIL, or null. */
  write(path: string, data: Uint8Array, mode: number, mtime: number): string | null;
}

function record(id: string, ...words: number[]): Uint8Array {
  const out = new Uint8Array(4 + 4 * words.length);
  const v = new DataView(out.buffer);
  for (let i = 0; i < 4; i++) out[i] = id.charCodeAt(i);
  words.forEach((w, i) => v.setUint32(4 + 4 * i, w >>> 0, true));
  return out;
}

function fail(message: string): Uint8Array {
  const m = bytes(message);
  return concat([record("FAIL", m.length), m]);
}

export function syncService(stream: AdbdStream, fs: SyncFs): void {
  const queue = new ByteQueue();
  let sending: { path: string; mode: number; parts: Uint8Array[] } | null = null;
  const reply = (data: Uint8Array) => void stream.write(data);

  const handle = (id: string, arg: Uint8Array): void => {
    const path = text(arg);
    switch (id) {
      case "STAT": {
        const s = fs.stat(path);
        reply(record("STAT", s?.mode ?? 0, s?.size ?? 0, s?.mtime ?? 0));
        return;
      }
      case "LIST": {
        for (const e of fs.list(path) ?? []) {
          const name = bytes(e.name);
          reply(concat([record("DENT", e.mode, e.size, e.mtime, name.length), name]));
        }
        reply(record("DONE", 0, 0, 0, 0));
        return;
      }
      case "RECV": {
        const data = fs.read(path);
        if (!data) return reply(fail(`open failed: No such file or directory`));
        for (let i = 0; i < data.length; i += SYNC_DATA_MAX) {
          const part = data.subarray(i, Math.min(data.length, i + SYNC_DATA_MAX));
          reply(concat([record("DATA", part.length), part]));
        }
        reply(record("DONE", 0));
        return;
      }
      case "SEND": {
        // "path,<decimal mode>"; the mode is optional in old clients.
        const comma = path.lastIndexOf(",");
        sending =
          comma < 0
            ? { path, mode: 0o644, parts: [] }
            : { path: path.slice(0, comma), mode: Number(path.slice(comma + 1)) & 0o7777, parts: [] };
        return;
      }
      default:
        reply(fail(`unknown sync request ${id}`));
        void stream.end();
    }
  };

  stream.onData = (data) => {
    queue.push(data);
    while (queue.length >= 8) {
      const head = queue.peek(8);
      const id = String.fromCharCode(...head.subarray(0, 4));
      const len = new DataView(head.buffer, head.byteOffset, 8).getUint32(4, true);
      if (sending) {
        if (id === "DONE") {
          queue.take(8);
          const error = fs.write(sending.path, concat(sending.parts), sending.mode, len);
          sending = null;
          reply(error ? fail(error) : record("OKAY", 0));
          continue;
        }
        if (id !== "DATA" || len > SYNC_DATA_MAX) {
          reply(fail(`unexpected ${id} during SEND`));
          void stream.end();
          return;
        }
        if (queue.length < 8 + len) return;
        queue.take(8);
        sending.parts.push(queue.take(len));
        continue;
      }
      if (id === "QUIT") {
        void stream.end();
        return;
      }
      if (len > MAX_PATH) {
        reply(fail("path too long"));
        void stream.end();
        return;
      }
      if (queue.length < 8 + len) return;
      queue.take(8);
      handle(id, queue.take(len));
    }
  };
}
