import type { AssetRef } from "../../protocol/types/evidence.ts";
import { RpcError } from "../../rpc/rpc-error.ts";
import type { EvidenceRow } from "../sessions/event-log.ts";
import type { ObjectStore } from "./object-store.ts";

/** Stored Evidence: its canonical reference, and the row the event that references it records. */
export interface StoredEvidence {
  ref: AssetRef;
  row: EvidenceRow;
}

/**
 * Content-addressed Evidence (05 §4): the same bytes always give the same canonical AssetRef.
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

/** Evidence as files named by their digest (ObjectStore); metadata and references live in the event store. */
export class FileEvidenceStore implements EvidenceStore {
  constructor(private readonly objects: ObjectStore) {}

  async put(bytes: Uint8Array, mediaType: string): Promise<StoredEvidence> {
    checkMediaType(mediaType);
    const sha256 = await this.objects.put(bytes);
    return { ref: canonicalRef(sha256, mediaType), row: { sha256, mediaType, byteLength: bytes.length } };
  }

  read(sha256: string): Promise<Uint8Array | null> {
    return this.objects.read(sha256);
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
