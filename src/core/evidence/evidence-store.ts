import type { AssetRef } from "../../protocol/types/evidence.ts";

/** Content-addressed Evidence: the same bytes always yield the same canonical AssetRef (05 §4). */
export interface EvidenceStore {
  /** Stores the bytes (once per digest) and returns their canonical reference. */
  put(bytes: Uint8Array, mediaType: string): Promise<AssetRef>;
  /** The stored bytes and media type, or null when the digest is unknown. */
  get(sha256: string): Promise<{ bytes: Uint8Array; mediaType: string } | null>;
}

export function canonicalRef(sha256: string, mediaType: string): AssetRef {
  return { id: `sha256:${sha256}`, mediaType, uri: `devicerail://assets/sha256/${sha256}`, sha256 };
}

export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** Process-lifetime store for tests and for daemons run without a data directory. */
export class MemoryEvidenceStore implements EvidenceStore {
  private readonly objects = new Map<string, { bytes: Uint8Array; mediaType: string }>();

  async put(bytes: Uint8Array, mediaType: string): Promise<AssetRef> {
    const digest = sha256Hex(bytes);
    if (!this.objects.has(digest)) this.objects.set(digest, { bytes: bytes.slice(), mediaType });
    return canonicalRef(digest, mediaType);
  }

  async get(sha256: string) {
    return this.objects.get(sha256) ?? null;
  }

  get size(): number {
    return this.objects.size;
  }
}
