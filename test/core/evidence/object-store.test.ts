import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/evidence/evidence-store.ts";
import { MAX_OBJECT_BYTES, ObjectStore, type ObjectStoreFs } from "../../../src/core/evidence/object-store.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";

let root: string;
let dir: string;

beforeEach(() => {
  root = fs.mkdtempSync(join(tmpdir(), "object-store-"));
  dir = join(root, "evidence");
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const bytesOf = (text: string) => new TextEncoder().encode(text);

/** The client-visible part of a failure, or a marker when the promise did not reject with an RpcError. */
async function failure(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === "function" ? p() : p);
    return "resolved";
  } catch (e) {
    if (!(e instanceof RpcError)) return `not an RpcError: ${String(e)}`;
    return { code: e.code, retryable: e.error.data.retryable, details: e.error.data.details };
  }
}

const mode = (path: string) => fs.statSync(path).mode & 0o777;

describe("ObjectStore", () => {
  test("returns the stored bytes when they are read back by their digest", async () => {
    const store = await ObjectStore.open(dir);
    const bytes = bytesOf("hello evidence");
    const digest = await store.put(bytes);
    expect(digest).toEqual(sha256Hex(bytes));
    expect(await store.read(digest)).toEqual(bytes);
    expect(store.has(digest)).toEqual(true);
    expect(store.pathOf(digest)).toEqual(join(dir, "objects", digest.slice(0, 2), digest));
  });

  test("returns null and reports absence when the digest was never stored", async () => {
    const store = await ObjectStore.open(dir);
    const digest = sha256Hex(bytesOf("never stored"));
    expect({ read: await store.read(digest), has: store.has(digest) }).toEqual({ read: null, has: false });
  });

  test("keeps one file and does not rewrite it when the same bytes are put twice", async () => {
    const store = await ObjectStore.open(dir);
    const bytes = bytesOf("same bytes");
    const digest = await store.put(bytes);
    const before = fs.statSync(store.pathOf(digest));
    expect(await store.put(bytes.slice())).toEqual(digest);
    const after = fs.statSync(store.pathOf(digest));
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
    expect(fs.readdirSync(join(dir, "objects", digest.slice(0, 2)))).toEqual([digest]);
  });

  test("rejects with empty_evidence when the bytes are empty", async () => {
    const store = await ObjectStore.open(dir);
    expect(await failure(store.put(new Uint8Array()))).toEqual({
      code: "empty_evidence",
      retryable: false,
      details: null,
    });
  });

  test("rejects with evidence_too_large when the bytes exceed the limit", async () => {
    const store = await ObjectStore.open(dir, { maxBytes: 8 });
    expect(await store.put(bytesOf("12345678"))).toEqual(sha256Hex(bytesOf("12345678")));
    expect(await failure(store.put(bytesOf("123456789")))).toEqual({
      code: "evidence_too_large",
      retryable: false,
      details: { actualBytes: 9, maximumBytes: 8 },
    });
    expect(fs.readdirSync(join(dir, "tmp"))).toEqual([]);
  });

  test("refuses a limit above MAX_OBJECT_BYTES when the store is opened", async () => {
    expect(await failure(ObjectStore.open(dir, { maxBytes: MAX_OBJECT_BYTES + 1 }))).toEqual({
      code: "invalid_evidence_store_configuration",
      retryable: false,
      details: { maxBytes: MAX_OBJECT_BYTES + 1 },
    });
  });

  test("rejects with invalid_evidence_digest when the digest is not 64 lowercase hex", async () => {
    const store = await ObjectStore.open(dir);
    const upper = sha256Hex(bytesOf("x")).toUpperCase();
    const invalid = (digest: string) => ({ code: "invalid_evidence_digest", retryable: false, details: { digest } });
    expect(await failure(store.read(upper))).toEqual(invalid(upper));
    expect(await failure(store.read("../../etc/passwd"))).toEqual(invalid("../../etc/passwd"));
    expect(await failure(() => store.has("abc"))).toEqual(invalid("abc"));
    expect(await failure(store.remove(""))).toEqual(invalid(""));
  });

  test("rejects with evidence_corrupt when a stored file's bytes were overwritten", async () => {
    const store = await ObjectStore.open(dir);
    const digest = await store.put(bytesOf("original"));
    fs.writeFileSync(store.pathOf(digest), bytesOf("tampered"));
    expect(await failure(store.read(digest))).toEqual({
      code: "evidence_corrupt",
      retryable: false,
      details: { actual: sha256Hex(bytesOf("tampered")), expected: digest },
    });
  });

  test("replaces a truncated copy when the same bytes are put again", async () => {
    const store = await ObjectStore.open(dir);
    const bytes = bytesOf("whole object");
    const digest = await store.put(bytes);
    fs.truncateSync(store.pathOf(digest), 3);
    expect(await store.put(bytes)).toEqual(digest);
    expect(await store.read(digest)).toEqual(bytes);
  });

  test("clears temp files and stores nothing for them when it reopens after a crash mid-write", async () => {
    await ObjectStore.open(dir);
    const complete = bytesOf("written but never renamed");
    fs.writeFileSync(join(dir, "tmp", "0123456789abcdef.part"), complete);
    fs.writeFileSync(join(dir, "tmp", "fedcba9876543210.part"), complete.subarray(0, 5));
    const store = await ObjectStore.open(dir);
    expect(fs.readdirSync(join(dir, "tmp"))).toEqual([]);
    expect(fs.readdirSync(join(dir, "objects"))).toEqual([]);
    expect(store.has(sha256Hex(complete))).toEqual(false);
  });

  test("removes exactly the unkept objects when swept", async () => {
    const store = await ObjectStore.open(dir);
    const digests = await Promise.all(["a", "b", "c", "d"].map((s) => store.put(bytesOf(s))));
    const kept = new Set([digests[0], digests[2]]);
    const orphans = [digests[1], digests[3]].sort();
    expect(await store.sweep((d) => kept.has(d))).toEqual(orphans as string[]);
    expect(digests.map((d) => store.has(d))).toEqual([true, false, true, false]);
    expect(await store.sweep(() => true)).toEqual([]);
  });

  test("tolerates removing an object when it is absent", async () => {
    const store = await ObjectStore.open(dir);
    const digest = await store.put(bytesOf("short-lived"));
    await store.remove(digest);
    await store.remove(digest);
    expect(store.has(digest)).toEqual(false);
  });

  test("refuses with unsafe_evidence_path when the folder or a subfolder is a symlink", async () => {
    const real = join(root, "real");
    fs.mkdirSync(real);
    fs.symlinkSync(real, dir);
    expect(await failure(ObjectStore.open(dir))).toEqual({
      code: "unsafe_evidence_path",
      retryable: false,
      details: { path: dir, reason: "symlink" },
    });

    const other = join(root, "other");
    fs.mkdirSync(other);
    fs.symlinkSync(real, join(other, "objects"));
    expect(await failure(ObjectStore.open(other))).toEqual({
      code: "unsafe_evidence_path",
      retryable: false,
      details: { path: join(other, "objects"), reason: "symlink" },
    });
  });

  test("refuses with unsafe_evidence_path when the folder is a regular file", async () => {
    fs.writeFileSync(dir, "not a folder");
    expect(await failure(ObjectStore.open(dir))).toEqual({
      code: "unsafe_evidence_path",
      retryable: false,
      details: { path: dir, reason: "not_directory" },
    });
  });

  test("creates folders 0700 and object files 0600 when it stores bytes", async () => {
    const store = await ObjectStore.open(dir);
    const digest = await store.put(bytesOf("private"));
    expect({
      dir: mode(dir),
      objects: mode(join(dir, "objects")),
      tmp: mode(join(dir, "tmp")),
      fanOut: mode(join(dir, "objects", digest.slice(0, 2))),
      object: mode(store.pathOf(digest)),
    }).toEqual({ dir: 0o700, objects: 0o700, tmp: 0o700, fanOut: 0o700, object: 0o600 });
  });

  test("stores and reads back every payload when 20 puts of distinct and identical bytes run concurrently", async () => {
    const store = await ObjectStore.open(dir);
    const payloads = Array.from({ length: 20 }, (_, i) => bytesOf(i % 2 === 0 ? `distinct ${i}` : "shared payload"));
    const digests = await Promise.all(payloads.map((p) => store.put(p)));
    expect(digests).toEqual(payloads.map(sha256Hex));
    expect(await Promise.all(digests.map((d) => store.read(d)))).toEqual(payloads);
    expect(await store.sweep(() => true)).toEqual([]);
    expect(fs.readdirSync(join(dir, "tmp"))).toEqual([]);
  });

  test("succeeds when another process stores the same object between the existence check and the rename", async () => {
    const bytes = bytesOf("raced");
    const digest = sha256Hex(bytes);
    const racing: ObjectStoreFs = {
      ...fs,
      openSync: ((path: string, flags: string, m?: number) => {
        if (flags === "wx") fs.writeFileSync(join(dir, "objects", digest.slice(0, 2), digest), bytes, { mode: 0o600 });
        return fs.openSync(path, flags, m);
      }) as typeof fs.openSync,
    };
    const store = await ObjectStore.open(dir, { fs: racing });
    expect(await store.put(bytes)).toEqual(digest);
    expect({ bytes: await store.read(digest), tmp: fs.readdirSync(join(dir, "tmp")) }).toEqual({ bytes, tmp: [] });
  });
});

/** Wraps node:fs to record the durability-relevant calls, labelling descriptors by what they opened. */
function recordingFs(failOn?: (call: string) => boolean): { fs: ObjectStoreFs; calls: string[] } {
  const calls: string[] = [];
  const fdPaths = new Map<number, string>();
  const label = (path: string) =>
    path === root
      ? "<root>"
      : path === dir
        ? "<dir>"
        : path
            .slice(dir.length + 1)
            .replace(/[0-9a-f]{32}\.part$/, "<temp>")
            .replace(/[0-9a-f]{64}$/, "<sha>");
  const note = (call: string) => {
    calls.push(call);
    if (failOn?.(call)) throw Object.assign(new Error(`injected failure at ${call}`), { code: "EIO" });
  };
  const seam: ObjectStoreFs = {
    ...fs,
    openSync: ((path: string, flags: string, m?: number) => {
      note(`open ${label(path)} ${flags}`);
      const fd = fs.openSync(path, flags, m);
      fdPaths.set(fd, label(path));
      return fd;
    }) as typeof fs.openSync,
    writeSync: ((fd: number, buffer: Uint8Array, offset: number, length: number) => {
      note(`write ${fdPaths.get(fd)}`);
      return fs.writeSync(fd, buffer, offset, length);
    }) as typeof fs.writeSync,
    fsyncSync: (fd) => {
      note(`fsync ${fdPaths.get(fd)}`);
      fs.fsyncSync(fd);
    },
    fsync: ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
      note(`fsync ${fdPaths.get(fd)}`);
      fs.fsync(fd, done);
    }) as typeof fs.fsync,
    closeSync: (fd) => {
      note(`close ${fdPaths.get(fd)}`);
      fs.closeSync(fd);
    },
    renameSync: (from, to) => {
      note(`rename ${label(String(from))} -> ${label(String(to))}`);
      fs.renameSync(from, to);
    },
    mkdirSync: ((path: string, options: fs.MakeDirectoryOptions) => {
      note(`mkdir ${label(path)}`);
      return fs.mkdirSync(path, options);
    }) as typeof fs.mkdirSync,
  };
  return { fs: seam, calls };
}

describe("ObjectStore durability", () => {
  test("syncs the parent of each folder when open creates the layout", async () => {
    const rec = recordingFs();
    await ObjectStore.open(dir, { fs: rec.fs });
    const synced = (folder: string) => [`open ${folder} r`, `fsync ${folder}`, `close ${folder}`];
    expect(rec.calls).toEqual([
      "mkdir <dir>",
      ...synced("<root>"),
      "mkdir objects",
      ...synced("<dir>"),
      "mkdir tmp",
      ...synced("<dir>"),
    ]);
  });

  test("writes, syncs, closes, renames and then syncs the folder when a new object is put", async () => {
    const rec = recordingFs();
    const store = await ObjectStore.open(dir, { fs: rec.fs });
    const bytes = bytesOf("durable");
    const fan = sha256Hex(bytes).slice(0, 2);
    rec.calls.length = 0;
    await store.put(bytes);
    expect(rec.calls).toEqual([
      `mkdir objects/${fan}`,
      "open objects r",
      "fsync objects",
      "close objects",
      "open tmp/<temp> wx",
      "write tmp/<temp>",
      "fsync tmp/<temp>",
      "close tmp/<temp>",
      `rename tmp/<temp> -> objects/${fan}/<sha>`,
      `open objects/${fan} r`,
      `fsync objects/${fan}`,
      `close objects/${fan}`,
    ]);
  });

  test("skips the fan-out steps when the fan-out folder already exists", async () => {
    const rec = recordingFs();
    const store = await ObjectStore.open(dir, { fs: rec.fs });
    const bytes = bytesOf("second object");
    const fan = sha256Hex(bytes).slice(0, 2);
    fs.mkdirSync(join(dir, "objects", fan), { mode: 0o700 });
    rec.calls.length = 0;
    await store.put(bytes);
    expect(rec.calls).toEqual([
      "open tmp/<temp> wx",
      "write tmp/<temp>",
      "fsync tmp/<temp>",
      "close tmp/<temp>",
      `rename tmp/<temp> -> objects/${fan}/<sha>`,
      `open objects/${fan} r`,
      `fsync objects/${fan}`,
      `close objects/${fan}`,
    ]);
  });

  test("does no file I/O when the object already exists", async () => {
    const rec = recordingFs();
    const store = await ObjectStore.open(dir, { fs: rec.fs });
    await store.put(bytesOf("once"));
    rec.calls.length = 0;
    await store.put(bytesOf("once"));
    expect(rec.calls).toEqual([]);
  });

  for (const step of ["write tmp/<temp>", "fsync tmp/<temp>", "close tmp/<temp>", "rename"]) {
    test(`rejects with evidence_io_error and leaves no temp file when ${step.split(" ")[0]} fails`, async () => {
      const rec = recordingFs((call) => call.startsWith(step));
      const store = await ObjectStore.open(dir, { fs: rec.fs });
      const bytes = bytesOf(`fails at ${step}`);
      const operation = step.split(" ")[0];
      expect(await failure(store.put(bytes))).toEqual({
        code: "evidence_io_error",
        retryable: true,
        details: { operation, errno: "EIO" },
      });
      expect({ tmp: fs.readdirSync(join(dir, "tmp")), stored: store.has(sha256Hex(bytes)) }).toEqual({
        tmp: [],
        stored: false,
      });
    });
  }
});
