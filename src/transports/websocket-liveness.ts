/**
 * What both WebSocket planes (JSON-RPC at /rpc, events at /v/<token>) set alike: no compression
 * (messages are small JSON, and deflate keeps a context per socket), and pings from the daemon, so
 * a peer that has not sent a frame, a pong included, for 120 s is closed as gone.
 */
export const WEBSOCKET_LIVENESS = { perMessageDeflate: false, sendPings: true, idleTimeout: 120 } as const;
