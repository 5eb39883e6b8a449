/**
 * Reading a large Session makes garbage far faster than the collector's own schedule frees it:
 * each event read is parsed, checked, encoded and written, and the daemon's RSS grew by hundreds
 * of MiB while a 150 MB Session was exported, although no more than a page was ever live. A
 * collection every READ_COLLECT_BYTES of event bodies read keeps that growth to a few pages'
 * worth (scripts/bench/report-memory.ts measures it); a small read never pays for one.
 */
export const READ_COLLECT_BYTES = 4 * 1_048_576;

let sinceCollect = 0;

/** Counts `bytes` of event bodies just read, collecting garbage when enough have been read since the last time. */
export function noteRead(bytes: number): void {
  sinceCollect += bytes;
  if (sinceCollect < READ_COLLECT_BYTES) return;
  sinceCollect = 0;
  Bun.gc(true);
}
