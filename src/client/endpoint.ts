/** Where a daemon listens for clients: its Unix socket, or a TCP host and port. */
export type Endpoint = { socket: string } | { host: string; port: number };

/** A host as a URL or `host:port` writes it: an IPv6 address in brackets. */
export const hostText = (host: string): string => (host.includes(":") ? `[${host}]` : host);

/** The endpoint for people and logs: the socket's path, or `host:port`. */
export const endpointText = (e: Endpoint): string => ("socket" in e ? e.socket : `${hostText(e.host)}:${e.port}`);

/** One HTTP request to the daemon's HTTP side on this endpoint (over the socket when it is one). */
export function fetchVia(e: Endpoint, path: string, init: RequestInit = {}): Promise<Response> {
  return "socket" in e
    ? fetch(`http://localhost${path}`, { ...init, unix: e.socket } as RequestInit)
    : fetch(`http://${hostText(e.host)}:${e.port}${path}`, init);
}
