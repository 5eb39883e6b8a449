import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_INLINE_BYTES,
  FileEvidenceStore,
  type StoredEvidence,
  sha256Hex,
} from "../../../src/core/evidence/evidence-store.ts";
import { ObjectStore } from "../../../src/core/evidence/object-store.ts";
import { type OpenedDatabase, openDatabase } from "../../../src/core/sessions/db.ts";
import { EventLog } from "../../../src/core/sessions/event-log.ts";
import { RpcError } from "../../../src/protocol/rpc-error.ts";

let dir: string;
let opened: OpenedDatabase;
let log: EventLog;
let objects: ObjectStore;

beforeEach(async () => {
  dir = fs.mkdtempSync(join(tmpdir(), "evidence-store-"));
  opened = openDatabase(join(dir, "db.sqlite"));
  log = new EventLog(opened);
  objects = await ObjectStore.open(join(dir, "evidence"));
});

afterEach(() => {
  log.dispose();
  opened.raw.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Bytes of exactly `n` bytes, distinct per `tag`. */
const bytesOf = (n: number, tag: string) => {
  const b = new Uint8Array(n).fill(0x61);
  b.set(new TextEncoder().encode(tag).subarray(0, n));
  return b;
};

/** Appends an observation that references `stored` to `sessionId`, as observe does. */
function record(sessionId: string, stored: StoredEvidence) {
  return log.append(sessionId, {
    deviceId: "mock-1",
    payload: {
      type: "observationCaptured",
      observation: {
        id: crypto.randomUUID(),
        deviceId: "mock-1",
        capturedAtMs: 1,
        viewport: { width: 1, height: 1, scaleFactor: 1 },
        screenshot: stored.ref,
        metadata: {},
      },
    },
    evidence: [stored.row],
  });
}

const objectFiles = () =>
  fs.readdirSync(join(dir, "evidence", "objects"), { recursive: true }).filter((p) => String(p).length > 3);

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    if (!(e instanceof RpcError)) return `not an RpcError: ${String(e)}`;
    return { code: e.code, details: e.error.data.details };
  }
}

describe("FileEvidenceStore", () => {
  test("keeps an object of at most the inline limit in the event's row, and no file, until and after the commit", async () => {
    const store = new FileEvidenceStore(objects, log);
    const { session } = await log.startSession();
    const bytes = bytesOf(DEFAULT_INLINE_BYTES, "largest inline");
    const stored = await store.put(bytes, "image/png");
    const sha256 = sha256Hex(bytes);
    expect(stored.ref).toEqual({
      id: `sha256:${sha256}`,
      mediaType: "image/png",
      uri: `devicerail://assets/sha256/${sha256}`,
      sha256,
    });
    expect(stored.row).toEqual({ sha256, mediaType: "image/png", byteLength: bytes.length, inline: bytes });
    // Not stored anywhere before its event is committed: a put without an event leaves nothing.
    expect({ read: await store.read(sha256), files: objectFiles() }).toEqual({ read: null, files: [] });
    await record(session.id, stored);
    expect({ read: await store.read(sha256), inline: log.inlineEvidence(sha256), files: objectFiles() }).toEqual({
      read: bytes,
      inline: bytes,
      files: [],
    });
  });

  test("stores a copy: changing the caller's buffer after the put changes nothing stored", async () => {
    const store = new FileEvidenceStore(objects, log);
    const { session } = await log.startSession();
    const bytes = bytesOf(100, "copied");
    const expected = bytes.slice();
    const stored = await store.put(bytes, "image/png");
    bytes.fill(0);
    await record(session.id, stored);
    expect(await store.read(stored.row.sha256)).toEqual(expected);
  });

  test("writes an object one byte over the limit as a file named by its digest, durable before the put returns", async () => {
    const store = new FileEvidenceStore(objects, log);
    const bytes = bytesOf(DEFAULT_INLINE_BYTES + 1, "smallest file");
    const stored = await store.put(bytes, "image/png");
    expect(stored.row).toEqual({ sha256: sha256Hex(bytes), mediaType: "image/png", byteLength: bytes.length });
    expect(new Uint8Array(fs.readFileSync(objects.pathOf(stored.row.sha256)))).toEqual(bytes);
    const { session } = await log.startSession();
    await record(session.id, stored);
    expect({ inline: log.inlineEvidence(stored.row.sha256), read: await store.read(stored.row.sha256) }).toEqual({
      inline: null,
      read: bytes,
    });
  });

  test("writes every object as a file when the inline limit is 0, and when no database side is given", async () => {
    for (const store of [new FileEvidenceStore(objects, log, 0), new FileEvidenceStore(objects)]) {
      const bytes = bytesOf(10, `tiny ${objectFiles().length}`);
      const stored = await store.put(bytes, "image/png");
      expect(stored.row.inline).toBeUndefined();
      expect(objects.has(stored.row.sha256)).toBe(true);
    }
  });

  test("stores identical bytes once, whichever Sessions reference them", async () => {
    const store = new FileEvidenceStore(objects, log);
    const bytes = bytesOf(500, "shared");
    const sessions = await Promise.all([log.startSession(), log.startSession()]);
    await Promise.all(sessions.map(async ({ session }) => record(session.id, await store.put(bytes, "image/png"))));
    expect(opened.raw.query("SELECT count(*) AS n, sum(length(inline_bytes)) AS bytes FROM evidence").get()).toEqual({
      n: 1,
      bytes: 500,
    });
    expect([...log.evidenceOf(sessions[0]!.session.id), ...log.evidenceOf(sessions[1]!.session.id)]).toEqual([
      sha256Hex(bytes),
      sha256Hex(bytes),
    ]);
  });

  test("removes an inline object with the last Session that references it, and keeps it while another one does", async () => {
    const store = new FileEvidenceStore(objects, log);
    const bytes = bytesOf(300, "collected");
    const sha256 = sha256Hex(bytes);
    const a = (await log.startSession()).session.id;
    const b = (await log.startSession()).session.id;
    for (const id of [a, b]) {
      await record(id, await store.put(bytes, "image/png"));
      await log.endSession(id, { outcome: "completed", reason: null });
    }
    expect(await log.deleteSession(a)).toEqual([]);
    expect(await store.read(sha256)).toEqual(bytes);
    expect(await log.deleteSession(b)).toEqual([sha256]);
    await store.remove([sha256]);
    expect({ read: await store.read(sha256), has: log.hasEvidence(sha256) }).toEqual({ read: null, has: false });
  });

  test("writes the bytes again when a deletion removed the object between the put and the event's commit", async () => {
    const store = new FileEvidenceStore(objects, log);
    const bytes = bytesOf(200, "raced");
    const old = (await log.startSession()).session.id;
    await record(old, await store.put(bytes, "image/png"));
    await log.endSession(old, { outcome: "completed", reason: null });
    const { session } = await log.startSession();
    const stored = await store.put(bytes, "image/png");
    expect(await log.deleteSession(old)).toEqual([stored.row.sha256]);
    await record(session.id, stored);
    expect(await store.read(stored.row.sha256)).toEqual(bytes);
  });

  test("rejects with evidence_corrupt when the database's bytes no longer match their digest", async () => {
    const store = new FileEvidenceStore(objects, log);
    const { session } = await log.startSession();
    const stored = await store.put(bytesOf(64, "tampered"), "image/png");
    await record(session.id, stored);
    const replaced = bytesOf(64, "someone else");
    opened.raw.run("UPDATE evidence SET inline_bytes = ? WHERE sha256 = ?", [replaced, stored.row.sha256]);
    expect(await failure(store.read(stored.row.sha256))).toEqual({
      code: "evidence_corrupt",
      details: { actual: sha256Hex(replaced), expected: stored.row.sha256 },
    });
  });

  test("refuses empty bytes, an invalid media type and a malformed digest with typed errors", async () => {
    const store = new FileEvidenceStore(objects, log);
    expect(await failure(store.put(new Uint8Array(0), "image/png"))).toEqual({ code: "empty_evidence", details: null });
    expect(await failure(store.put(bytesOf(3, "x"), "png"))).toEqual({
      code: "invalid_evidence_media_type",
      details: { mediaType: "png" },
    });
    expect(await failure(store.read("sha256:zz"))).toEqual({
      code: "invalid_evidence_digest",
      details: { digest: "sha256:zz" },
    });
  });
});
