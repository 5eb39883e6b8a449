/** How large an evidence object may be kept inline in the database; read by the config loader too, which must not load the store. */
/** Default largest object kept in the database rather than as a file (DEVICERAIL_EVIDENCE_INLINE_BYTES). */
export const DEFAULT_INLINE_BYTES = 64 * 1024;
/** Largest inline limit accepted: bigger objects belong in files. */
export const MAX_INLINE_BYTES = 256 * 1024;
