import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Where a stopped daemon keeps an Evidence object: its database row (bytes when inline) and its object file. */
export interface StoredEvidence {
  /** A row exists in the evidence table. */
  row: boolean;
  /** The bytes kept in the database; null for a file-backed or absent object. */
  inline: Uint8Array | null;
  /** The object file's bytes; null when there is no file. */
  file: Uint8Array | null;
}

/** Where the store puts an object file: `<evidence folder>/objects/<2 hex>/<sha256>`. */
export const objectPath = (evidenceDir: string, sha256: string) =>
  join(evidenceDir, "objects", sha256.slice(0, 2), sha256);

/**
 * Reads what a data directory holds for one digest. Only for a daemon that has exited: a running
 * daemon holds the database under an exclusive lock.
 */
export function storedEvidence(
  dataDir: string,
  sha256: string,
  evidenceDir = join(dataDir, "evidence"),
): StoredEvidence {
  const db = new Database(join(dataDir, "devicerail.sqlite"));
  try {
    const row = db
      .query<{ inline_bytes: Uint8Array | null }, [string]>("SELECT inline_bytes FROM evidence WHERE sha256 = ?")
      .get(sha256);
    const path = objectPath(evidenceDir, sha256);
    return {
      row: row !== null,
      inline: row?.inline_bytes ? new Uint8Array(row.inline_bytes) : null,
      file: existsSync(path) ? new Uint8Array(readFileSync(path)) : null,
    };
  } finally {
    db.close();
  }
}
