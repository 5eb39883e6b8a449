import type { Server, ServerWebSocket } from "bun";
import * as v from "valibot";
import { type ErrorName, errorInfo, errorObject } from "../protocol/errors.ts";
import { HelloParamsSchema } from "../protocol/types/handshake.ts";
import { EventsSubscribeParamsSchema } from "../protocol/types/stream.ts";
import type { TestEvent } from "../protocol/types/event.ts";
import { failureFrame, successFrame } from "../rpc/encode.ts";
import { selectVersion } from "../rpc/handshake.ts";
import { parseJson } from "../rpc/json.ts";
import { RpcError, type Logger } from "../rpc/rpc-error.ts";

export const SUBPROTOCOL = "devicerail.events.v1";
const MAX_MESSAGE_BYTES = 1_048_576;
const MAX_SOCKETS = 32;
const STEP_TIMEOUT_MS = 5_000;
const QUEUE_EVENTS = 64;
const QUEUE_BYTES = 4 * 1_048_576;
const STALL_MS = 2_000;
/** How long shutdown waits for sockets to take their terminal and Close frames (10 limits). */
const SHUTDOWN_GRACE_MS = 3_000;
/** Bytes handed to Bun before our own queue holds the rest (Bun's send buffer is unbounded). */
const SEND_WINDOW_BYTES = 1_048_576;
const OFFER = { ranges: [{ major: 1, minMinor: 3, maxMinor: 5 }] };

/** What the plane needs from core (structural, so transports stay below core). */
export interface EventPlane {
  readonly epoch: string;
  consume(token: string, origin: string | null): { sessionId: string } | null;
  subscribe(
    cap: { sessionId: string },
    params: v.InferOutput<typeof EventsSubscribeParamsSchema>,
    minor: number,
  ): { result: { subscriptionId: string; sessionId: string }; feed: { start(sink: { event(e: TestEvent): void; end(t: unknown): void }): void; stop(): void } };
}

type Phase = "hello" | "subscribe" | "streaming" | "closed";
interface SocketState {
  cap: { sessionId: string };
  phase: Phase;
  minor: number;
  timer: ReturnType<typeof setTimeout> | null;
  /** Notifications not yet handed to Bun, with the cursor each carries. */
  queue: { text: string; cursor: { streamEpoch: string; sessionId: string; sequence: number } }[];
  queuedBytes: number;
  stall: ReturnType<typeof setTimeout> | null;
  subscriptionId: string;
  lastEmitted: { streamEpoch: string; sessionId: string; sequence: number } | null;
  feed: { stop(): void } | null;
}

const forbidden = () => new Response("forbidden", { status: 403, headers: { "Cache-Control": "no-store" } });
const TOKEN_PATH = /^\/v\/([0-9a-f]{64})$/;

/**
 * The loopback WebSocket event plane (07): capability URLs, the socket's own hello, one
 * events.subscribe, then events and exactly one terminal. Sends are windowed: a subscriber that
 * does not read fills our bounded queue and is terminated as a slow consumer, never left to
 * grow memory or to block the event log.
 */
export function listenEventPlane(plane: EventPlane, opts: { log: Logger; serverVersion: string }) {
  const open = new Set<ServerWebSocket<SocketState>>();
  let stopping = false;
  const { log } = opts;

  const send = (ws: ServerWebSocket<SocketState>, text: string) => {
    ws.send(text);
  };

  const closeWith = (ws: ServerWebSocket<SocketState>, code: number, reason: string, frame?: string) => {
    const s = ws.data;
    if (s.phase === "closed") return;
    if (frame) send(ws, frame);
    s.phase = "closed";
    clear(s);
    ws.close(code, reason);
  };

  const clear = (s: SocketState) => {
    if (s.timer) clearTimeout(s.timer);
    if (s.stall) clearTimeout(s.stall);
    s.timer = s.stall = null;
    s.feed?.stop();
    s.feed = null;
  };

  const step = (ws: ServerWebSocket<SocketState>) => {
    if (ws.data.timer) clearTimeout(ws.data.timer);
    // Ran out of time for the hello or the subscribe: dropped without an answer (07 §4).
    ws.data.timer = setTimeout(() => closeWith(ws, 1008, "timeout"), STEP_TIMEOUT_MS);
  };

  const pump = (ws: ServerWebSocket<SocketState>) => {
    const s = ws.data;
    while (s.queue.length > 0 && ws.getBufferedAmount() < SEND_WINDOW_BYTES) {
      const next = s.queue.shift() as SocketState["queue"][number];
      s.queuedBytes -= next.text.length;
      send(ws, next.text);
      // Handed to the socket: it will be written before the Close frame.
      s.lastEmitted = next.cursor;
    }
    if (s.queue.length <= QUEUE_EVENTS && s.queuedBytes <= QUEUE_BYTES && s.stall) {
      clearTimeout(s.stall);
      s.stall = null;
    }
  };

  const terminal = (ws: ServerWebSocket<SocketState>, termination: unknown) => {
    const s = ws.data;
    const params = {
      subscriptionId: s.subscriptionId,
      sessionId: s.cap.sessionId,
      ...(s.lastEmitted ? { lastEmittedCursor: s.lastEmitted } : {}),
      termination,
    };
    // Whatever is queued goes first; the terminal is the last message before Close.
    for (const next of s.queue.splice(0)) {
      send(ws, next.text);
      s.lastEmitted = next.cursor;
    }
    closeWith(ws, 1000, "stream terminal", JSON.stringify({ jsonrpc: "2.0", method: "events.stream.terminal", params }));
  };

  const hello = (ws: ServerWebSocket<SocketState>, id: unknown, params: unknown, hasTimeout: boolean, method: unknown) => {
    const rid = (id ?? null) as string | number | null;
    const reject = (name: ErrorName, details: unknown) => closeWith(ws, 1002, "hello rejected", failureFrame(rid, errorObject(name, { details })));
    if (method !== "system.hello" || hasTimeout) return reject("ws_handshake_required", { requiredMethod: "system.hello" });
    const parsed = v.safeParse(HelloParamsSchema, params);
    if (!parsed.success) return closeWith(ws, 1002, "hello rejected", failureFrame(rid, errorObject("hello_invalid_params", { details: { method: "system.hello" }, retryable: false })));
    const offer = parsed.output.protocol;
    const selected = offer.ranges.length > 0 && offer.ranges.every((r) => r.minMinor <= r.maxMinor) ? selectVersion(offer, OFFER) : "noCommonVersion";
    if (typeof selected === "string") return reject("ws_protocol_version_incompatible", { clientProtocol: offer, serverProtocol: OFFER });
    const { required, optional } = parsed.output.features;
    const unsupported = [...new Set(required.filter((f) => f !== "events.stream.v1"))].sort();
    if (unsupported.length > 0) return reject("ws_required_feature_unsupported", { unsupportedRequired: unsupported });
    if (!required.includes("events.stream.v1") && !optional.includes("events.stream.v1"))
      return reject("ws_required_feature_unsupported", { requiredFeature: "events.stream.v1" });
    ws.data.minor = selected.minor;
    ws.data.phase = "subscribe";
    step(ws);
    send(
      ws,
      successFrame(rid as string | number, {
        connectionId: crypto.randomUUID(),
        features: { enabled: ["events.stream.v1"] },
        protocol: { selected },
        server: { name: "devicerail-daemon", version: opts.serverVersion },
        transport: { framing: "jsonMessage", kind: "webSocket" },
      }),
    );
  };

  const subscribe = (ws: ServerWebSocket<SocketState>, id: unknown, params: unknown, hasTimeout: boolean, method: unknown) => {
    const rid = (id ?? null) as string | number | null;
    const reject = (err: RpcError) => closeWith(ws, 1008, "subscribe rejected", failureFrame(rid, err.error));
    if (method !== "events.subscribe") return reject(new RpcError("ws_method_not_found", { details: { method } }));
    if (hasTimeout) return reject(new RpcError("ws_request_timeout_not_supported"));
    const parsed = v.safeParse(EventsSubscribeParamsSchema, params);
    if (!parsed.success) return reject(new RpcError("invalid_params", { arg: "events.subscribe", details: { method: "events.subscribe" } }));
    let sub: ReturnType<EventPlane["subscribe"]>;
    try {
      sub = plane.subscribe(ws.data.cap, parsed.output, ws.data.minor);
    } catch (err) {
      return reject(err instanceof RpcError ? err : new RpcError("stream_internal_error"));
    }
    const s = ws.data;
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
    s.phase = "streaming";
    s.subscriptionId = sub.result.subscriptionId;
    s.feed = sub.feed;
    send(ws, successFrame(rid as string | number, sub.result));
    sub.feed.start({
      event: (e) => {
        if (s.phase !== "streaming") return;
        const cursor = { streamEpoch: plane.epoch, sessionId: s.cap.sessionId, sequence: e.sequence };
        const text = `{"jsonrpc":"2.0","method":"events.stream.event","params":{"subscriptionId":${JSON.stringify(s.subscriptionId)},"cursor":${JSON.stringify(cursor)},"event":${JSON.stringify(e)}}}`;
        if (text.length > MAX_MESSAGE_BYTES)
          return terminal(ws, { reason: "eventTooLarge", error: errorInfo("stream_terminal_event_too_large", { details: { limitBytes: MAX_MESSAGE_BYTES, observedBytesAtLeast: text.length } }) });
        s.queue.push({ text, cursor });
        s.queuedBytes += text.length;
        pump(ws);
        if ((s.queue.length > QUEUE_EVENTS || s.queuedBytes > QUEUE_BYTES) && !s.stall)
          s.stall = setTimeout(() => {
            s.queue.length = 0;
            s.queuedBytes = 0;
            terminal(ws, { reason: "slowConsumer", error: errorInfo("stream_terminal_slow_queue") });
          }, STALL_MS);
      },
      end: (t) => terminal(ws, t),
    });
  };

  const server: Server<SocketState> = Bun.serve<SocketState>({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      const url = new URL(req.url);
      const token = TOKEN_PATH.exec(url.pathname)?.[1];
      const host = req.headers.get("host");
      const proto = req.headers.get("sec-websocket-protocol");
      if (stopping || open.size >= MAX_SOCKETS || !token || url.search !== "" || host !== `127.0.0.1:${srv.port}` || proto !== SUBPROTOCOL) return forbidden();
      if (req.headers.get("upgrade")?.toLowerCase() !== "websocket" || !req.headers.get("sec-websocket-key")) return forbidden();
      const cap = plane.consume(token, req.headers.get("origin"));
      if (!cap) return forbidden();
      const data: SocketState = { cap, phase: "hello", minor: 0, timer: null, queue: [], queuedBytes: 0, stall: null, subscriptionId: "", lastEmitted: null, feed: null };
      if (srv.upgrade(req, { data, headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } })) return undefined;
      return forbidden();
    },
    websocket: {
      maxPayloadLength: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      sendPings: true,
      idleTimeout: 120,
      open(ws) {
        open.add(ws);
        step(ws);
      },
      message(ws, message) {
        const s = ws.data;
        if (s.phase === "streaming") return closeWith(ws, 1002, "unexpected message");
        if (s.phase === "closed") return;
        const wrong = s.phase === "hello" ? "invalid hello" : "invalid subscribe";
        if (typeof message !== "string") return closeWith(ws, 1002, wrong, failureFrame(null, errorObject("ws_binary_message")));
        const parsed = parseJson(message);
        const body = parsed.ok ? (parsed.value as Record<string, unknown>) : null;
        if (!body || typeof body !== "object" || Array.isArray(body) || body.jsonrpc !== "2.0" || !("id" in body) || typeof body.method !== "string")
          return closeWith(ws, 1002, wrong, failureFrame(null, errorObject("ws_invalid_request")));
        if (s.phase === "hello") hello(ws, body.id, body.params, "timeoutMs" in body, body.method);
        else subscribe(ws, body.id, body.params, "timeoutMs" in body, body.method);
      },
      drain(ws) {
        pump(ws);
      },
      close(ws) {
        open.delete(ws);
        ws.data.phase = "closed";
        clear(ws.data);
      },
    },
  });
  log.info({ port: server.port }, "event stream plane listening");
  return {
    port: server.port as number,
    endpoint: (token: string) => `ws://127.0.0.1:${server.port}/v/${token}`,
    /** After the streams have ended (their subscribers got a terminal): sockets still in their handshake are closed too. */
    async stop(): Promise<void> {
      stopping = true;
      for (const ws of open) if (ws.data.phase !== "streaming") closeWith(ws, 1001, "daemon shutdown");
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([server.stop(false), new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)))]);
      clearTimeout(timer);
      await server.stop(true);
    },
  };
}
