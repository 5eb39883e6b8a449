import * as nodeFs from "node:fs";
import { join } from "node:path";
import { RpcError } from "../../protocol/rpc-error.ts";
import { DurableFs, errno, ioError } from "./durable-fs.ts";
import { sha256Hex } from "./evidence-store.ts";

export const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

/** Concurrent object writes; more would only compete for the same disk and fsync queue. */
const WRITE_CONCURRENCY = 4;
const DIGEST = /^[0-9a-f]{64}$/;
const FAN_OUT = /^[0-9a-f]{2}$/;

/** The node:fs calls the store makes, so tests can observe the durability protocol or inject failures. */
export type ObjectStoreFs = Pick<
  typeof nodeFs,
  | "openSync"
  | "writeSync"
  | "fsyncSync"
  | "fsync"
  | "closeSync"
  | "renameSync"
  | "mkdirSync"
  | "chmodSync"
  | "lstatSync"
  | "readdirSync"
  | "unlinkSync"
  | "rmSync"
>;

export interface ObjectStoreOptions {
  /** Largest accepted object; at most MAX_OBJECT_BYTES. */
  maxBytes?: number;
  fs?: ObjectStoreFs;
}

class Semaphore {
  private readonly waiting: (() => void)[] = [];
  constructor(private free: number) {}

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

function assertDigest(sha256: string): void {
  if (!DIGEST.test(sha256)) throw new RpcError("invalid_evidence_digest", { details: { digest: sha256 } });
}

/** The bytes of Evidence by SHA-256, one file each; metadata and references live elsewhere (the event store's database). */
export class ObjectStore {
  private readonly objectsDir: string;
  private readonly tmpDir: string;
  private readonly writes = new Semaphore(WRITE_CONCURRENCY);
  private readonly disk: DurableFs;
  /** Puts of the same bytes share one write, so a caller never sees an object another put is still making durable. */
  private readonly inflight = new Map<string, Promise<string>>();

  private constructor(
    readonly dir: string,
    private readonly maxBytes: number,
    private readonly fs: ObjectStoreFs,
  ) {
    this.objectsDir = join(dir, "objects");
    this.tmpDir = join(dir, "tmp");
    this.disk = new DurableFs(fs);
  }

  /** Creates <dir> (mode 0700), <dir>/objects and <dir>/tmp; removes leftover temp files of an earlier crash. Refuses (unsafe_evidence_path) when <dir> or a subfolder is a symlink or is not a directory. */
  static async open(dir: string, options: ObjectStoreOptions = {}): Promise<ObjectStore> {
    const maxBytes = options.maxBytes ?? MAX_OBJECT_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_OBJECT_BYTES)
      throw new RpcError("invalid_evidence_store_configuration", { details: { maxBytes } });
    const store = new ObjectStore(dir, maxBytes, options.fs ?? nodeFs);
    for (const folder of [store.dir, store.objectsDir, store.tmpDir]) store.disk.ensureFolder(folder);
    store.clearTmp();
    return store;
  }

  /** Durably stores bytes and returns their lowercase hex SHA-256. Identical bytes are stored once. */
  async put(bytes: Uint8Array): Promise<string> {
    if (bytes.byteLength === 0) throw new RpcError("empty_evidence");
    if (bytes.byteLength > this.maxBytes)
      throw new RpcError("evidence_too_large", {
        details: { actualBytes: bytes.byteLength, maximumBytes: this.maxBytes },
      });
    const sha256 = sha256Hex(bytes);
    const pending = this.inflight.get(sha256);
    if (pending) return pending;
    const done = this.store(sha256, bytes).finally(() => this.inflight.delete(sha256));
    this.inflight.set(sha256, done);
    return done;
  }

  /** The bytes, verified against their digest on read; null when absent. */
  async read(sha256: string): Promise<Uint8Array | null> {
    const path = this.pathOf(sha256);
    let bytes: Uint8Array;
    try {
      bytes = await Bun.file(path).bytes();
    } catch (e) {
      if (errno(e) === "ENOENT") return null;
      throw ioError("read", e);
    }
    const actual = sha256Hex(bytes);
    if (actual !== sha256) throw new RpcError("evidence_corrupt", { details: { actual, expected: sha256 } });
    return bytes;
  }

  has(sha256: string): boolean {
    return this.disk.regularFileSize(this.pathOf(sha256)) !== null;
  }

  /** Removes one object (absent is fine). */
  async remove(sha256: string): Promise<void> {
    const path = this.pathOf(sha256);
    try {
      this.fs.unlinkSync(path);
    } catch (e) {
      if (errno(e) !== "ENOENT") throw ioError("remove", e);
    }
  }

  /**
   * Removes every object for which keep(sha256) is false (orphans left by a crash between the file
   * write and the database commit); returns the removed digests sorted. Run it before new puts are
   * committed: an object whose put has returned but whose reference is not yet in the database is,
   * by this definition, an orphan.
   */
  async sweep(keep: (sha256: string) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const sha256 of this.list()) {
      if (this.inflight.has(sha256) || keep(sha256)) continue;
      await this.remove(sha256);
      removed.push(sha256);
    }
    return removed.sort();
  }

  /** Path of an object file (for tests and exports). */
  pathOf(sha256: string): string {
    assertDigest(sha256);
    return join(this.objectsDir, sha256.slice(0, 2), sha256);
  }

  /** Digests of the well-formed object files; anything else under objects/ is not ours to judge. */
  private list(): string[] {
    const digests: string[] = [];
    try {
      for (const fan of this.fs.readdirSync(this.objectsDir, { withFileTypes: true })) {
        if (!fan.isDirectory() || !FAN_OUT.test(fan.name)) continue;
        for (const entry of this.fs.readdirSync(join(this.objectsDir, fan.name), { withFileTypes: true })) {
          if (entry.isFile() && DIGEST.test(entry.name) && entry.name.startsWith(fan.name)) digests.push(entry.name);
        }
      }
    } catch (e) {
      throw ioError("list", e);
    }
    return digests;
  }

  private async store(sha256: string, bytes: Uint8Array): Promise<string> {
    await this.writes.acquire();
    try {
      const target = this.pathOf(sha256);
      // A file of the wrong size is a torn or tampered copy; writing again replaces it.
      if (this.disk.regularFileSize(target) === bytes.byteLength) return sha256;
      const fanDir = join(this.objectsDir, sha256.slice(0, 2));
      this.disk.ensureFolder(fanDir);
      const temp = join(this.tmpDir, `${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")}.part`);
      await this.disk.writeTemp(temp, bytes);
      try {
        this.fs.renameSync(temp, target);
      } catch (e) {
        this.disk.discard(temp);
        throw ioError("rename", e);
      }
      await this.disk.fsyncDir(fanDir, true);
      return sha256;
    } finally {
      this.writes.release();
    }
  }

  /** Whatever is in tmp is a write that never reached its rename, so no reference can point at it. */
  private clearTmp(): void {
    try {
      for (const name of this.fs.readdirSync(this.tmpDir)) {
        this.fs.rmSync(join(this.tmpDir, name), { recursive: true, force: true });
      }
    } catch (e) {
      throw ioError("clear_tmp", e);
    }
  }
}
