import type { FeatureName } from "../protocol/features.ts";
import { PRIVILEGED_TRANSPORTS } from "../protocol/methods.ts";
import type { RpcId } from "../protocol/ids.ts";
import type { HelloResult, PeerInfo, TransportInfo } from "../protocol/types/handshake.ts";
import type { ServerServices } from "./handshake.ts";
import type { RpcError } from "../protocol/rpc-error.ts";

/**
 * What a connection authenticated with a narrower credential than the host's token may do (a farm
 * allocation: one device, for as long as the allocation lives). Null on a connection means no limit.
 */
export interface ConnectionGrant {
  /** The one device the connection may see, select and lease. */
  readonly deviceId: string;
  /** Runs before each request: null lets it through; an error is the answer (a lapsed allocation); a promise while the grant is being confirmed. */
  check(conn: Connection, method: string, params: unknown): RpcError | null | Promise<RpcError | null>;
  /** The connection closed (after its Session, if any, has ended). */
  closed(): void;
}

/** The wire transports of PRIVILEGED_TRANSPORTS and the in-process ones (HTTP API, MCP, tests' memory transport). */
const PRIVILEGED_KINDS: ReadonlySet<string> = new Set([...PRIVILEGED_TRANSPORTS, "http", "mcp", "memory"]);

export type AbortReason = "requested" | "timeout" | "shutdown";

/** One admitted concurrent request. The reason is recorded before the signal fires so the outcome can be named. */
export interface InFlight {
  readonly id: RpcId;
  readonly method: string;
  readonly controller: AbortController;
  reason: AbortReason | null;
  readonly timeoutMs: number | null;
  /** Absolute epoch ms of the request deadline (admission + timeoutMs). */
  readonly deadline: number | null;
  timer: ReturnType<typeof setTimeout> | null;
  done: Promise<void>;
}

/**
 * Per-transport-connection protocol state: handshake phase, negotiated context and the in-flight
 * table. What core keeps per connection (selection, Session, media streams) lives in core
 * (src/core/connection-state.ts), keyed by this object. Nothing here is shared between connections.
 */
export class Connection {
  phase: "awaitingHello" | "ready" = "awaitingHello";
  hello: HelloResult | null = null;
  client: PeerInfo | null = null;
  minor = 0;
  features: ReadonlySet<FeatureName> = new Set();
  /** Keyed by the raw id: a Map keeps `"7"` and `7` apart, as the protocol requires. */
  readonly inFlight = new Map<RpcId, InFlight>();
  /** Set once shutdown or close began: no new requests are admitted. */
  closing = false;
  /**
   * Aborted when the connection closes. Inline requests, which request.cancel cannot reach, run
   * under this signal, so a session.start still probing its device stops when its client goes.
   */
  readonly closeController = new AbortController();
  /** Inline requests whose handler has not settled; close waits for them (see Dispatcher.close). */
  readonly inline = new Set<Promise<unknown>>();
  /** Set by the transport when the client authenticated with a grant instead of the host's token. */
  grant: ConnectionGrant | null = null;
  /**
   * Whether privileged calls may run (docs/protocol/transport-and-framing.md#privileged-methods).
   * Decided by the transport kind: the wire transports a web page cannot reach, and in-process
   * callers, which act for a request their own transport admitted; the HTTP API clears it for a
   * request a web page sent. Any other kind (the JSON-RPC WebSocket) starts without.
   */
  privileged: boolean;

  constructor(
    readonly transport: TransportInfo,
    readonly services: ServerServices,
    /** Writes one encoded frame (without the newline); resolves when the transport accepted it. */
    readonly send: (frame: string) => void | Promise<void>,
  ) {
    this.privileged = PRIVILEGED_KINDS.has(transport.kind);
  }

  has(feature: FeatureName): boolean {
    return this.features.has(feature);
  }

  get connectionId(): string | null {
    return this.hello?.connectionId ?? null;
  }
}
