import type { ServerWebSocket } from "bun";
import * as v from "valibot";
import { type ErrorName, errorInfo, errorObject } from "../protocol/errors.ts";
import { HelloParamsSchema } from "../protocol/types/handshake.ts";
import { EventsSubscribeParamsSchema } from "../protocol/types/stream.ts";
import type { TestEvent } from "../protocol/types/event.ts";
import { failureFrame, successFrame } from "../rpc/encode.ts";
import { selectVersion } from "../rpc/handshake.ts";
import { parseJson } from "../protocol/json.ts";
import { RpcError } from "../protocol/rpc-error.ts";
import { Outbox, messageSink } from "./outbox.ts";
import { SEND_WINDOW_BYTES } from "./websocket-liveness.ts";

export const MAX_MESSAGE_BYTES = 1_048_576;
const STEP_TIMEOUT_MS = 5_000;
const QUEUE_EVENTS = 64;
const QUEUE_BYTES = 4 * 1_048_576;
const STALL_MS = 2_000;
const OFFER = { ranges: [{ major: 1, minMinor: 3, maxMinor: 5 }] };

/** What the plane needs from core (structural, so transports stay below core). */
export interface EventPlane {
  readonly epoch: string;
  consume(token: string, origin: string | null): { sessionId: string } | null;
  subscribe(
    cap: { sessionId: string },
    params: v.InferOutput<typeof EventsSubscribeParamsSchema>,
    minor: number,
  ): {
    result: { subscriptionId: string; sessionId: string };
    feed: { start(sink: { event(e: TestEvent): void; end(t: unknown): void }): void; stop(): void };
  };
}

type Cursor = { streamEpoch: string; sessionId: string; sequence: number };
type Queued = { text: string; cursor: Cursor };
type Phase = "hello" | "subscribe" | "streaming" | "closed";

/**
 * One event-plane WebSocket (docs/protocol/event-stream.md): its own hello, one events.subscribe,
 * then events and exactly one terminal. Sends are windowed through the outbox; a subscriber that
 * does not read lets it grow past its bounds and is ended as a slow consumer after STALL_MS,
 * never left to grow memory or to block the event log.
 */
export class EventSubscriber {
  phase: Phase = "hello";
  private minor = 0;
  private stepTimer: ReturnType<typeof setTimeout> | null = null;
  private stallTimer: ReturnType<typeof setTimeout> | null = null;
  private subscriptionId = "";
  private lastEmitted: Cursor | null = null;
  private feed: { stop(): void } | null = null;
  private ws!: ServerWebSocket<EventSubscriber>;
  private outbox!: Outbox<Queued>;

  constructor(
    private readonly cap: { sessionId: string },
    private readonly plane: EventPlane,
    private readonly serverVersion: string,
  ) {}

  /** The socket is open: the hello must come within the step timeout. */
  opened(ws: ServerWebSocket<EventSubscriber>): void {
    this.ws = ws;
    this.outbox = new Outbox<Queued>(
      messageSink(
        ws,
        SEND_WINDOW_BYTES,
        (q: Queued) => q.text,
        (q) => (this.lastEmitted = q.cursor),
      ),
      { size: (q) => q.text.length },
    );
    this.step();
  }

  message(message: string | Buffer): void {
    if (this.phase === "streaming") return this.closeWith(1002, "unexpected message");
    if (this.phase === "closed") return;
    const wrong = this.phase === "hello" ? "invalid hello" : "invalid subscribe";
    if (typeof message !== "string")
      return this.closeWith(1002, wrong, failureFrame(null, errorObject("ws_binary_message")));
    const parsed = parseJson(message);
    const body = parsed.ok ? (parsed.value as Record<string, unknown>) : null;
    if (
      !body ||
      typeof body !== "object" ||
      Array.isArray(body) ||
      body.jsonrpc !== "2.0" ||
      !("id" in body) ||
      typeof body.method !== "string"
    )
      return this.closeWith(1002, wrong, failureFrame(null, errorObject("ws_invalid_request")));
    const rid = (body.id ?? null) as string | number | null;
    if (this.phase === "hello") this.hello(rid, body.params, "timeoutMs" in body, body.method);
    else this.subscribe(rid, body.params, "timeoutMs" in body, body.method);
  }

  /** The socket can take more. */
  writable(): void {
    this.outbox.writable();
    if (this.stallTimer && this.outbox.items <= QUEUE_EVENTS && this.outbox.bytes <= QUEUE_BYTES) {
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
    }
  }

  /** The socket closed (either side). */
  closed(): void {
    this.phase = "closed";
    this.clear();
  }

  /** Daemon shutdown of a socket still in its handshake (a streaming one gets its terminal from the feed). */
  shutdown(): void {
    if (this.phase !== "streaming") this.closeWith(1001, "daemon shutdown");
  }

  private send(text: string): void {
    this.ws.send(text);
  }

  private closeWith(code: number, reason: string, frame?: string): void {
    if (this.phase === "closed") return;
    if (frame) this.send(frame);
    this.phase = "closed";
    this.clear();
    this.ws.close(code, reason);
  }

  private clear(): void {
    if (this.stepTimer) clearTimeout(this.stepTimer);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stepTimer = this.stallTimer = null;
    this.feed?.stop();
    this.feed = null;
  }

  /** The hello or the subscribe must come within the step timeout, else the socket is dropped without an answer. */
  private step(): void {
    if (this.stepTimer) clearTimeout(this.stepTimer);
    this.stepTimer = setTimeout(() => this.closeWith(1008, "timeout"), STEP_TIMEOUT_MS);
  }

  private hello(rid: string | number | null, params: unknown, hasTimeout: boolean, method: unknown): void {
    const reject = (name: ErrorName, details: unknown) =>
      this.closeWith(1002, "hello rejected", failureFrame(rid, errorObject(name, { details })));
    if (method !== "system.hello" || hasTimeout)
      return reject("ws_handshake_required", { requiredMethod: "system.hello" });
    const parsed = v.safeParse(HelloParamsSchema, params);
    if (!parsed.success)
      return this.closeWith(
        1002,
        "hello rejected",
        failureFrame(
          rid,
          errorObject("hello_invalid_params", { details: { method: "system.hello" }, retryable: false }),
        ),
      );
    const offer = parsed.output.protocol;
    const selected =
      offer.ranges.length > 0 && offer.ranges.every((r) => r.minMinor <= r.maxMinor)
        ? selectVersion(offer, OFFER)
        : "noCommonVersion";
    if (typeof selected === "string")
      return reject("ws_protocol_version_incompatible", { clientProtocol: offer, serverProtocol: OFFER });
    const { required, optional } = parsed.output.features;
    const unsupported = [...new Set(required.filter((f) => f !== "events.stream.v1"))].sort();
    if (unsupported.length > 0) return reject("ws_required_feature_unsupported", { unsupportedRequired: unsupported });
    if (!required.includes("events.stream.v1") && !optional.includes("events.stream.v1"))
      return reject("ws_required_feature_unsupported", { requiredFeature: "events.stream.v1" });
    this.minor = selected.minor;
    this.phase = "subscribe";
    this.step();
    this.send(
      successFrame(rid as string | number, {
        connectionId: crypto.randomUUID(),
        features: { enabled: ["events.stream.v1"] },
        protocol: { selected },
        server: { name: "devicerail-daemon", version: this.serverVersion },
        transport: { framing: "jsonMessage", kind: "webSocket" },
      }),
    );
  }

  private subscribe(rid: string | number | null, params: unknown, hasTimeout: boolean, method: unknown): void {
    const reject = (err: RpcError) => this.closeWith(1008, "subscribe rejected", failureFrame(rid, err.error));
    if (method !== "events.subscribe") return reject(new RpcError("ws_method_not_found", { details: { method } }));
    if (hasTimeout) return reject(new RpcError("ws_request_timeout_not_supported"));
    const parsed = v.safeParse(EventsSubscribeParamsSchema, params);
    if (!parsed.success)
      return reject(
        new RpcError("invalid_params", { arg: "events.subscribe", details: { method: "events.subscribe" } }),
      );
    let sub: ReturnType<EventPlane["subscribe"]>;
    try {
      sub = this.plane.subscribe(this.cap, parsed.output, this.minor);
    } catch (err) {
      return reject(err instanceof RpcError ? err : new RpcError("stream_internal_error"));
    }
    if (this.stepTimer) clearTimeout(this.stepTimer);
    this.stepTimer = null;
    this.phase = "streaming";
    this.subscriptionId = sub.result.subscriptionId;
    this.feed = sub.feed;
    this.send(successFrame(rid as string | number, sub.result));
    sub.feed.start({ event: (e) => this.event(e), end: (t) => this.terminal(t) });
  }

  private event(e: TestEvent): void {
    if (this.phase !== "streaming") return;
    const cursor = { streamEpoch: this.plane.epoch, sessionId: this.cap.sessionId, sequence: e.sequence };
    const text = `{"jsonrpc":"2.0","method":"events.stream.event","params":{"subscriptionId":${JSON.stringify(this.subscriptionId)},"cursor":${JSON.stringify(cursor)},"event":${JSON.stringify(e)}}}`;
    if (text.length > MAX_MESSAGE_BYTES)
      return this.terminal({
        reason: "eventTooLarge",
        error: errorInfo("stream_terminal_event_too_large", {
          details: { limitBytes: MAX_MESSAGE_BYTES, observedBytesAtLeast: text.length },
        }),
      });
    this.outbox.push({ text, cursor });
    if ((this.outbox.items > QUEUE_EVENTS || this.outbox.bytes > QUEUE_BYTES) && !this.stallTimer)
      this.stallTimer = setTimeout(() => {
        this.outbox.clear();
        this.terminal({ reason: "slowConsumer", error: errorInfo("stream_terminal_slow_queue") });
      }, STALL_MS);
  }

  private terminal(termination: unknown): void {
    // Whatever is queued goes first; the terminal is the last message before Close.
    this.outbox.takeAll((q) => {
      this.send(q.text);
      this.lastEmitted = q.cursor;
    });
    const params = {
      subscriptionId: this.subscriptionId,
      sessionId: this.cap.sessionId,
      ...(this.lastEmitted ? { lastEmittedCursor: this.lastEmitted } : {}),
      termination,
    };
    this.closeWith(
      1000,
      "stream terminal",
      JSON.stringify({ jsonrpc: "2.0", method: "events.stream.terminal", params }),
    );
  }
}
