import type * as nodeFs from "node:fs";
import { dirname, resolve } from "node:path";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { ObjectStoreFs } from "./object-store.ts";

export const errno = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined;

export function ioError(operation: string, e: unknown): RpcError {
  if (e instanceof RpcError) return e;
  return new RpcError("evidence_io_error", { details: { operation, errno: errno(e) ?? null } });
}

export function unsafePath(path: string, symlink: boolean): RpcError {
  return new RpcError("unsafe_evidence_path", { details: { path, reason: symlink ? "symlink" : "not_directory" } });
}

/**
 * The file-system steps that make an object durable, over an injectable fs (tests fail each step):
 * a temporary file written, fsynced and closed; folders created 0700 with their parent entries
 * fsynced; folder fsyncs that tolerate file systems without them.
 */
export class DurableFs {
  constructor(private readonly fs: ObjectStoreFs) {}

  /** fsync on the thread pool: a put must not stall every other connection while the disk flushes. */
  fsyncAsync(fd: number): Promise<void> {
    return new Promise((resolve, reject) => this.fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  }

  async writeTemp(temp: string, bytes: Uint8Array): Promise<void> {
    let fd: number;
    try {
      fd = this.fs.openSync(temp, "wx", 0o600);
    } catch (e) {
      throw ioError("open", e);
    }
    let step = "write";
    try {
      for (let offset = 0; offset < bytes.byteLength; ) {
        const written = this.fs.writeSync(fd, bytes, offset, bytes.byteLength - offset);
        // A write that makes no progress would otherwise spin this loop forever.
        if (written <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
        offset += written;
      }
      step = "fsync";
      await this.fsyncAsync(fd);
    } catch (e) {
      this.closeQuietly(fd);
      this.discard(temp);
      throw ioError(step, e);
    }
    try {
      this.fs.closeSync(fd);
    } catch (e) {
      this.discard(temp);
      throw ioError("close", e);
    }
  }

  /** Syncs a folder's entries; on the thread pool when `async` (puts), inline while opening the store. */
  fsyncDir(dir: string, async: true): Promise<void>;
  fsyncDir(dir: string, async?: false): void;
  fsyncDir(dir: string, async = false): Promise<void> | void {
    // Windows cannot open a directory for fsync; NTFS journals the rename itself.
    if (process.platform === "win32") return async ? Promise.resolve() : undefined;
    let fd: number;
    try {
      fd = this.fs.openSync(dir, "r");
    } catch (e) {
      throw ioError("fsync_dir", e);
    }
    const settle = (e: unknown) => {
      if (e !== null) {
        // Some file systems (certain network and FUSE mounts) do not implement fsync on directories.
        const code = errno(e);
        if (code !== "EINVAL" && code !== "ENOTSUP" && code !== "EBADF") {
          this.closeQuietly(fd);
          throw ioError("fsync_dir", e);
        }
      }
      this.closeQuietly(fd);
    };
    if (async)
      return this.fsyncAsync(fd).then(
        () => settle(null),
        (e: unknown) => settle(e),
      );
    try {
      this.fs.fsyncSync(fd);
    } catch (e) {
      settle(e);
      return;
    }
    settle(null);
  }

  ensureFolder(folder: string): void {
    const stat = this.lstat(folder);
    if (stat) {
      if (stat.isSymbolicLink() || !stat.isDirectory()) throw unsafePath(folder, stat.isSymbolicLink());
      return;
    }
    let first: string | undefined;
    try {
      // Recursive, so a folder another writer made a moment ago is accepted rather than an error.
      first = this.fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
      // The umask may have stripped bits from the requested mode; the store needs exactly 0700.
      if (first !== undefined) this.fs.chmodSync(folder, 0o700);
    } catch (e) {
      throw ioError("mkdir", e);
    }
    if (first === undefined) return;
    // A new folder is only durable once its entry in the parent is; otherwise a crash can drop it with every object inside.
    for (let created = resolve(folder); ; created = dirname(created)) {
      this.fsyncDir(dirname(created));
      if (created === resolve(first) || dirname(created) === created) break;
    }
  }

  lstat(path: string): nodeFs.Stats | null {
    try {
      return this.fs.lstatSync(path);
    } catch (e) {
      if (errno(e) === "ENOENT") return null;
      throw ioError("stat", e);
    }
  }

  regularFileSize(path: string): number | null {
    const stat = this.lstat(path);
    return stat?.isFile() ? stat.size : null;
  }

  discard(temp: string): void {
    try {
      this.fs.unlinkSync(temp);
    } catch {
      // The temp file is already gone or unreachable; the next open clears tmp anyway.
    }
  }

  closeQuietly(fd: number): void {
    try {
      this.fs.closeSync(fd);
    } catch {
      // The descriptor is released by the kernel even when close reports an error.
    }
  }
}
