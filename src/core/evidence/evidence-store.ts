import type { AssetRef } from "../../protocol/types/evidence.ts";
import { RpcError } from "../../protocol/rpc-error.ts";
import type { EvidenceRow } from "../sessions/event-log.ts";
import { DEFAULT_INLINE_BYTES, MAX_INLINE_BYTES } from "./inline-limits.ts";
import type { ObjectStore } from "./object-store.ts";

/** Stored Evidence: its canonical reference, and the row the event that references it records. */
export interface StoredEvidence {
  ref: AssetRef;
  row: EvidenceRow;
}

/**
 * Content-addressed Evidence (docs/protocol/sessions-and-events.md#evidence): the same bytes always give the same canonical AssetRef.
 * `put` makes the bytes durable before returning, so an event that references them (written
 * after) can never point at a missing or partial object.
 */
export interface EvidenceStore {
  put(bytes: Uint8Array, mediaType: string): Promise<StoredEvidence>;
  /** The bytes, verified against their digest; null when unknown. */
  read(sha256: string): Promise<Uint8Array | null>;
  /** Removes objects no Session references any more. */
  remove(sha256s: readonly string[]): Promise<void>;
}

export function canonicalRef(sha256: string, mediaType: string): AssetRef {
  return { id: `sha256:${sha256}`, mediaType, uri: `devicerail://assets/sha256/${sha256}`, sha256 };
}

export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** `type/subtype[;params]`: ≤ 255 bytes, one `/`, both sides non-empty, printable ASCII without spaces. */
export function checkMediaType(mediaType: string): void {
  const [type, rest] = mediaType.split("/", 2);
  const subtype = rest?.split(";")[0];
  const ok =
    mediaType.length <= 255 && /^[!-~]+$/.test(mediaType) && mediaType.split("/").length === 2 && !!type && !!subtype;
  if (!ok) throw new RpcError("invalid_evidence_media_type", { details: { mediaType } });
}

/** The database's side of Evidence (EventLog): the bytes of objects kept inline. */
export interface InlineEvidence {
  inlineEvidence(sha256: string): Uint8Array | null;
}

/**
 * Evidence in two tiers; metadata and references live in the event store either way.
 *
 * - Up to `inlineBytes` (UI trees, small screenshots): the bytes travel in the EvidenceRow and are
 *   written in the transaction of the event that references them, so one commit makes object and
 *   reference durable together, and a crash can leave neither a partial object nor an orphan. A
 *   file would cost a new inode, two fsyncs and a rename per observation (about 1–1.5 ms on a
 *   virtual disk, measured by scripts/bench/android-observe.ts); SQLite reads blobs of this size
 *   faster than separate files, too (sqlite.org/intern-v-extern-blob.html).
 * - Larger objects: files named by their digest (ObjectStore), made durable before the put returns.
 */
export { DEFAULT_INLINE_BYTES, MAX_INLINE_BYTES };

export class FileEvidenceStore implements EvidenceStore {
  constructor(
    private readonly objects: ObjectStore,
    private readonly inline: InlineEvidence | null = null,
    private readonly inlineBytes = DEFAULT_INLINE_BYTES,
  ) {}

  async put(bytes: Uint8Array, mediaType: string): Promise<StoredEvidence> {
    checkMediaType(mediaType);
    if (this.inline && bytes.byteLength > 0 && bytes.byteLength <= this.inlineBytes) {
      const sha256 = sha256Hex(bytes);
      // Always carried: when the row exists the insert is ignored, and when a Session deletion
      // removed it since, the event writes it again with its bytes.
      return {
        ref: canonicalRef(sha256, mediaType),
        row: { sha256, mediaType, byteLength: bytes.length, inline: bytes.slice() },
      };
    }
    const sha256 = await this.objects.put(bytes);
    return { ref: canonicalRef(sha256, mediaType), row: { sha256, mediaType, byteLength: bytes.length } };
  }

  /**
   * The bytes, verified against their digest, from the database or else from the object files
   * (which also refuse a malformed digest: no row can have one).
   */
  async read(sha256: string): Promise<Uint8Array | null> {
    const inline = this.inline?.inlineEvidence(sha256) ?? null;
    if (inline === null) return this.objects.read(sha256);
    const actual = sha256Hex(inline);
    if (actual !== sha256) throw new RpcError("evidence_corrupt", { details: { actual, expected: sha256 } });
    return inline;
  }

  async remove(sha256s: readonly string[]): Promise<void> {
    for (const sha of sha256s) await this.objects.remove(sha);
  }
}

/** Process-lifetime store for core tests. */
export class MemoryEvidenceStore implements EvidenceStore {
  private readonly objects = new Map<string, Uint8Array>();

  async put(bytes: Uint8Array, mediaType: string): Promise<StoredEvidence> {
    checkMediaType(mediaType);
    if (bytes.length === 0) throw new RpcError("empty_evidence");
    const sha256 = sha256Hex(bytes);
    if (!this.objects.has(sha256)) this.objects.set(sha256, bytes.slice());
    return { ref: canonicalRef(sha256, mediaType), row: { sha256, mediaType, byteLength: bytes.length } };
  }

  async read(sha256: string): Promise<Uint8Array | null> {
    return this.objects.get(sha256) ?? null;
  }

  async remove(sha256s: readonly string[]): Promise<void> {
    for (const sha of sha256s) this.objects.delete(sha);
  }

  get size(): number {
    return this.objects.size;
  }
}
