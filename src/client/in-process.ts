/**
 * The in-process wiring: a control connection inside the daemon, with the same handshake,
 * selection, Session and leases as a socket client's, called with values. The composition root
 * opens the connections (it holds the dispatcher); a surface receives only `Connect`.
 */
import type { Answer, Channel, Client } from "./client.ts";
import { clientOver } from "./client.ts";

/** What the composition root opens per connection: calls answered as values, and the close a dropped socket would get. */
export interface LocalConnection {
  call(id: number, method: string, params: object | undefined, timeoutMs: number | undefined): Promise<Answer>;
  close(reason?: string): Promise<void>;
}

export interface ConnectOptions {
  /** The transport the connection reports (TransportInfo.kind): "http" or "mcp". */
  transport: "http" | "mcp";
  /** Whether privileged calls run (docs/protocol/transport-and-framing.md#privileged-methods); false for what a web page sent. */
  privileged?: boolean;
}

/** An in-process client whose close can name its reason (daemon shutdown, for one). */
export interface LocalClient extends Client {
  close(reason?: string): Promise<void>;
}

/** Stored Evidence by digest, which the composition root hands the surfaces that serve its bytes (GET /evidence, MCP images, the report). */
export interface EvidenceSource {
  /** The verified bytes and their stored media type; null when the digest is unknown. */
  read(sha256: string): Promise<{ bytes: Uint8Array; mediaType: string } | null>;
}

/** Opens one in-process connection; the surface says hello on it (hello.ts). */
export type Connect = (opts: ConnectOptions) => LocalClient;

/** The client over a connection the composition root opened; closing it twice closes it once. */
export function localClient(conn: LocalConnection): LocalClient {
  let closed: Promise<void> | null = null;
  let reason: string | undefined;
  const channel: Channel = {
    send: (id, method, params, timeoutMs) => conn.call(id, method, params, timeoutMs),
    close: () => {
      closed ??= conn.close(reason);
      return closed;
    },
  };
  const client = clientOver(channel);
  return {
    ...client,
    close: (why?: string) => {
      reason ??= why;
      return channel.close();
    },
  };
}
