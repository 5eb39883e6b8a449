/**
 * What both WebSocket planes (JSON-RPC at /rpc, events at /v/<token>) set alike: no compression
 * (messages are small JSON, and deflate keeps a context per socket), and pings from the daemon, so
 * a peer that has not sent a frame, a pong included, for 120 s is closed as gone.
 */
export const WEBSOCKET_LIVENESS = { perMessageDeflate: false, sendPings: true, idleTimeout: 120 } as const;

/** Bytes handed to Bun before a plane's own bounded queue holds the rest (Bun's send buffer is unbounded). */
export const SEND_WINDOW_BYTES = 1_048_576;
