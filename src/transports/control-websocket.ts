import type { ServerWebSocket, WebSocketHandler } from "bun";
import { errorObject } from "../protocol/errors.ts";
import { Connection, type ConnectionGrant } from "../rpc/connection.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import { withinGrace } from "../rpc/grace.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { InputLoop } from "./input-loop.ts";
import { Outbox, messageSink } from "./outbox.ts";
import { SEND_WINDOW_BYTES, WEBSOCKET_LIVENESS } from "./websocket-liveness.ts";

/** One JSON-RPC message per text message, like one NDJSON line (docs/protocol/transport-and-framing.md). */
export const MAX_WS_MESSAGE_BYTES = 1_048_576;
/** Bun drops (send() returns 0) beyond this; with SEND_WINDOW_BYTES far below it, it is never reached. */
export const BACKPRESSURE_LIMIT_BYTES = 16 * 1_048_576;
/** Bounded queues, as on the other transports: past either, the client is not reading and is closed. */
const MAX_QUEUED_OUTPUT = 256;
const MAX_QUEUED_INPUT = 256;
const MAX_QUEUED_INPUT_BYTES = 4 * 1_048_576;
const FLUSH_GRACE_MS = 2_000;

const BINARY = Symbol("binary");
type Message = string | typeof BINARY;

/** One JSON-RPC WebSocket connection: its Connection, the input loop and the outbox. */
export interface ControlSocket {
  conn: Connection | null;
  input: InputLoop<Message> | null;
  outbox: Outbox<string> | null;
  /** Set once the socket is closed or cut: output is dropped from then on. */
  closed: boolean;
  closing: Promise<void> | null;
  /** The grant the upgrade request authenticated with, when not the host's token. */
  grant: ConnectionGrant | null;
}

export const newControlSocket = (grant: ConnectionGrant | null = null): ControlSocket => ({
  conn: null,
  input: null,
  outbox: null,
  closed: false,
  closing: null,
  grant,
});

/**
 * JSON-RPC over WebSocket (`GET /rpc`): each socket is one control Connection with its own
 * handshake, selection, Session and in-flight table. Messages are handled in order like NDJSON
 * lines, through the same input loop and outbox as the byte transports; a client that lets
 * either queue overflow is disconnected.
 */
export function controlWebSocket(opts: { dispatcher: Dispatcher; services: ServerServices; log: Logger }) {
  const { dispatcher, log } = opts;
  const services: ServerServices = { ...opts.services, eventStreamListener: false };
  const sockets = new Set<ServerWebSocket<ControlSocket>>();

  /** A client that stopped reading would never take a Close frame either: the socket is cut at once. */
  const fatal = (ws: ServerWebSocket<ControlSocket>, reason: string) => {
    if (ws.data.closed) return;
    ws.data.closed = true;
    log.warn({ reason }, "control WebSocket closed by the server");
    ws.data.outbox?.clear();
    ws.data.input?.stop();
    ws.terminate();
    void end(ws, "RPC connection closed");
  };

  /** dispatcher.close exactly once, after the input loop let go of the connection. */
  const end = (
    ws: ServerWebSocket<ControlSocket>,
    reason: "daemon shutdown" | "RPC connection closed",
  ): Promise<void> => {
    const s = ws.data;
    s.closing ??= (async () => {
      s.input?.stop();
      await s.input?.idle();
      if (s.conn) await dispatcher.close(s.conn, reason);
    })();
    return s.closing;
  };

  const open = (ws: ServerWebSocket<ControlSocket>) => {
    const s = ws.data;
    const outbox = new Outbox<string>(
      messageSink(ws, SEND_WINDOW_BYTES, (t: string) => t),
      { size: (t) => t.length, maxItems: MAX_QUEUED_OUTPUT },
    );
    outbox.onFailure((err) => fatal(ws, err.message));
    const conn = new Connection({ kind: "webSocket", framing: "jsonMessage" }, services, (frame) => {
      if (s.closed) return;
      const pushed = outbox.push(frame);
      if (pushed === "overflow") return fatal(ws, "output queue overflow: the client is not reading");
      return pushed === "queued" ? outbox.drained() : undefined;
    });
    conn.grant = s.grant;
    s.conn = conn;
    s.outbox = outbox;
    s.input = new InputLoop<Message>({
      size: (m) => (m === BINARY ? 0 : m.length),
      pauseBytes: MAX_QUEUED_INPUT_BYTES,
      maxBytes: MAX_QUEUED_INPUT_BYTES,
      maxItems: MAX_QUEUED_INPUT,
      // Bun's WebSocket has no pause; the limits above close a client that floods while not reading.
      setReading: () => false,
      handle: (m) =>
        m === BINARY
          ? conn.send(checkedFailureFrame(null, errorObject("ws_binary_message")))
          : dispatcher.handleText(conn, m),
      overflow: () => fatal(ws, "input queue overflow: the client is not reading"),
      failed: (err) => {
        log.error({ err }, "control WebSocket input failed");
        fatal(ws, "internal error");
      },
    });
  };

  const handler: WebSocketHandler<ControlSocket> = {
    maxPayloadLength: MAX_WS_MESSAGE_BYTES,
    backpressureLimit: BACKPRESSURE_LIMIT_BYTES,
    closeOnBackpressureLimit: false,
    ...WEBSOCKET_LIVENESS,
    open(ws) {
      sockets.add(ws);
      open(ws);
    },
    message(ws, message) {
      if (ws.data.closing) return;
      ws.data.input?.push(typeof message === "string" ? message : BINARY);
    },
    drain(ws) {
      ws.data.outbox?.writable();
    },
    close(ws) {
      sockets.delete(ws);
      ws.data.closed = true;
      ws.data.outbox?.clear();
      void end(ws, "RPC connection closed");
    },
  };

  /** Daemon shutdown: each connection is closed (Sessions ended), its last answers flushed (bounded), then the socket. */
  const stop = async () => {
    await Promise.all(
      [...sockets].map(async (ws) => {
        await end(ws, "daemon shutdown");
        // Bun writes what it holds before the Close frame; only our own queue needs the wait.
        if (ws.data.outbox && !ws.data.closed) await withinGrace(ws.data.outbox.drained(), FLUSH_GRACE_MS);
        ws.close(1001, "daemon shutdown");
      }),
    );
  };

  return { handler, stop };
}
