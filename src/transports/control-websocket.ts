import type { ServerWebSocket, WebSocketHandler } from "bun";
import { errorObject } from "../protocol/errors.ts";
import { Connection } from "../rpc/connection.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../rpc/rpc-error.ts";

/** One JSON-RPC message per text message, like one NDJSON line (01 §3). */
export const MAX_WS_MESSAGE_BYTES = 1_048_576;
/** Bytes handed to Bun before our own queue holds the rest; far below Bun's backpressureLimit, so send() never drops. */
const SEND_WINDOW_BYTES = 1_048_576;
/** Bun drops (send() returns 0) beyond this; with the window above it is never reached. */
export const BACKPRESSURE_LIMIT_BYTES = 16 * 1_048_576;
/** Bounded queues, as on the other transports (01 §2): past either, the client is not reading and is closed. */
const MAX_QUEUED_OUTPUT = 256;
const MAX_QUEUED_INPUT = 256;
const MAX_QUEUED_INPUT_BYTES = 4 * 1_048_576;
const FLUSH_GRACE_MS = 2_000;

const BINARY = Symbol("binary");

export interface ControlSocket {
  conn: Connection | null;
  inbox: (string | typeof BINARY)[];
  inboxBytes: number;
  pumping: Promise<void> | null;
  outbox: string[];
  /** Resolved (and replaced) whenever the outbox empties. */
  drained: ReturnType<typeof Promise.withResolvers<void>> | null;
  closed: boolean;
  closing: Promise<void> | null;
}

export const newControlSocket = (): ControlSocket => ({
  conn: null,
  inbox: [],
  inboxBytes: 0,
  pumping: null,
  outbox: [],
  drained: null,
  closed: false,
  closing: null,
});

/**
 * JSON-RPC over WebSocket (`GET /rpc`): each socket is one control Connection with its own
 * handshake, selection, Session and in-flight table. Messages are processed in order like NDJSON
 * lines. Every send is checked: while Bun holds more than SEND_WINDOW_BYTES we queue, the input
 * loop waits for the drain, and a client that lets either queue overflow is disconnected.
 */
export function controlWebSocket(opts: { dispatcher: Dispatcher; services: ServerServices; log: Logger }) {
  const { dispatcher, log } = opts;
  const services: ServerServices = { ...opts.services, eventStreamListener: false };
  const sockets = new Set<ServerWebSocket<ControlSocket>>();

  /** A client that stopped reading would never take a Close frame either: the socket is cut at once. */
  const fatal = (ws: ServerWebSocket<ControlSocket>, reason: string) => {
    log.warn({ reason }, "control WebSocket closed by the server");
    ws.data.outbox = [];
    ws.data.inbox = [];
    ws.data.closed = true;
    ws.terminate();
    void end(ws, "RPC connection closed");
  };

  const pumpOut = (ws: ServerWebSocket<ControlSocket>) => {
    const s = ws.data;
    while (s.outbox.length > 0 && !s.closed && ws.getBufferedAmount() < SEND_WINDOW_BYTES) {
      if (ws.send(s.outbox.shift() as string) === 0) return fatal(ws, "message dropped by the runtime");
    }
    if (s.outbox.length === 0 && s.drained) {
      s.drained.resolve();
      s.drained = null;
    }
  };

  const send = (ws: ServerWebSocket<ControlSocket>, frame: string): void | Promise<void> => {
    const s = ws.data;
    if (s.closed) return;
    if (s.outbox.length === 0 && ws.getBufferedAmount() < SEND_WINDOW_BYTES) {
      if (ws.send(frame) === 0) fatal(ws, "message dropped by the runtime");
      return;
    }
    if (s.outbox.length >= MAX_QUEUED_OUTPUT) return fatal(ws, "output queue overflow: the client is not reading");
    s.outbox.push(frame);
    s.drained ??= Promise.withResolvers<void>();
    return s.drained.promise;
  };

  const pumpIn = async (ws: ServerWebSocket<ControlSocket>) => {
    const s = ws.data;
    const conn = s.conn as Connection;
    try {
      while (!s.closed && s.inbox.length > 0) {
        const message = s.inbox.shift() as string | typeof BINARY;
        let pending: void | Promise<void>;
        if (message === BINARY) pending = conn.send(checkedFailureFrame(null, errorObject("ws_binary_message")));
        else {
          s.inboxBytes -= message.length;
          pending = dispatcher.handleText(conn, message);
        }
        if (pending) await pending;
      }
    } catch (err) {
      log.error({ err }, "control WebSocket input failed");
      fatal(ws, "internal error");
    }
  };

  /** Starts the input loop unless it runs; messages that arrive as it finishes start it again. */
  const kick = (ws: ServerWebSocket<ControlSocket>) => {
    const s = ws.data;
    if (s.pumping || s.closed) return;
    s.pumping = pumpIn(ws).finally(() => {
      s.pumping = null;
      if (s.inbox.length > 0) kick(ws);
    });
  };

  /** dispatcher.close exactly once, after the input loop let go of the connection. */
  const end = (ws: ServerWebSocket<ControlSocket>, reason: "daemon shutdown" | "RPC connection closed"): Promise<void> => {
    const s = ws.data;
    s.closing ??= (async () => {
      s.drained?.resolve();
      if (s.pumping) await s.pumping;
      if (s.conn) await dispatcher.close(s.conn, reason);
    })();
    return s.closing;
  };

  const handler: WebSocketHandler<ControlSocket> = {
    maxPayloadLength: MAX_WS_MESSAGE_BYTES,
    backpressureLimit: BACKPRESSURE_LIMIT_BYTES,
    closeOnBackpressureLimit: false,
    perMessageDeflate: false,
    sendPings: true,
    idleTimeout: 120,
    open(ws) {
      sockets.add(ws);
      ws.data.conn = new Connection({ kind: "webSocket", framing: "jsonMessage" }, services, (frame) => send(ws, frame));
    },
    message(ws, message) {
      const s = ws.data;
      if (s.closed || s.closing) return;
      if (typeof message === "string") {
        s.inbox.push(message);
        s.inboxBytes += message.length;
      } else s.inbox.push(BINARY);
      if (s.inbox.length > MAX_QUEUED_INPUT || s.inboxBytes > MAX_QUEUED_INPUT_BYTES) return fatal(ws, "input queue overflow: the client is not reading");
      kick(ws);
    },
    drain(ws) {
      pumpOut(ws);
    },
    close(ws) {
      sockets.delete(ws);
      ws.data.closed = true;
      void end(ws, "RPC connection closed");
    },
  };

  /** Daemon shutdown: each connection is closed (Sessions ended), its last answers flushed (bounded), then the socket. */
  const stop = async () => {
    await Promise.all(
      [...sockets].map(async (ws) => {
        await end(ws, "daemon shutdown");
        // Bun writes what it holds before the Close frame; only our own queue needs the wait.
        const s = ws.data;
        if (s.outbox.length > 0 && !s.closed) {
          s.drained ??= Promise.withResolvers<void>();
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([s.drained.promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_GRACE_MS)))]);
          clearTimeout(timer);
        }
        ws.close(1001, "daemon shutdown");
      }),
    );
  };

  return { handler, stop };
}
