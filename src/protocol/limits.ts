/** The protocol's size limits (docs/protocol/limits.md). */

/** The longest JSON-RPC message, in UTF-8 bytes, either way: one NDJSON line, one WebSocket message, one HTTP body. */
export const MAX_FRAME_BYTES = 1_048_576;
