import type { Database } from "bun:sqlite";

/** Counts the transactions run on `raw` from now on (its transaction() is wrapped); the returned function reads the count. */
export function countTransactions(raw: Database): () => number {
  const original = raw.transaction.bind(raw);
  let count = 0;
  (raw as { transaction: typeof raw.transaction }).transaction = ((fn: () => void) => {
    count++;
    return original(fn);
  }) as typeof raw.transaction;
  return () => count;
}
