/**
 * `devicerail serve` on stdio while the data directory's daemon runs (one daemon per data
 * directory, see daemon-control.ts): stdin and stdout are relayed byte for byte to a connection of
 * that daemon, opened with the stdio relay line so that its hello reports transport `stdio`
 * (docs/protocol/transport-and-framing.md#transports). Without a running daemon, serve runs one
 * in-process instead (serve.ts).
 */
import type { Socket } from "bun";
import { STDIO_RELAY_LINE } from "../transports/first-bytes.ts";
import { setReading } from "../transports/ndjson-connection.ts";
import { credentialFor } from "./daemon-control.ts";
import { type DaemonRecord, isAlive, readRecord } from "../server/daemon-record.ts";
import { type Endpoint, endpointText } from "../client/endpoint.ts";
import { listenWhile } from "../transports/listeners.ts";

/** How long a relay waits for a daemon that is starting to name its endpoints. */
const STARTING_WAIT_MS = 15_000;
/** How long the relay waits for stdout to take the daemon's last answers (stdio.ts waits as long). */
const FLUSH_GRACE_MS = 5_000;

/** The record of the daemon that runs on the data directory, once it serves; null when none runs or it serves stdio only. */
async function runningDaemon(dataDir: string): Promise<DaemonRecord | null> {
  const deadline = Date.now() + STARTING_WAIT_MS;
  for (;;) {
    const record = readRecord(dataDir);
    if (!record || !isAlive(record.pid) || record.stdio) return null;
    if (record.state !== "starting" || Date.now() > deadline) return record;
    await Bun.sleep(25);
  }
}

const endpointsOf = (r: DaemonRecord): Endpoint[] => [
  ...(r.socket ? [{ socket: r.socket }] : []),
  ...(r.host !== undefined && r.port !== undefined ? [{ host: r.host, port: r.port }] : []),
];

type Relay = { over: boolean; drained: (() => void) | null; closed: () => void };

async function connect(endpoint: Endpoint, relay: Relay): Promise<Socket<undefined>> {
  // Answers are passed on as they come; while stdout is full, the daemon's connection waits.
  let unsettled = 0;
  const handlers = {
    data: (s: Socket<undefined>, chunk: Uint8Array) => {
      unsettled++;
      if (!process.stdout.write(chunk, () => unsettled--) && setReading(s, false))
        process.stdout.once("drain", () => setReading(s, true));
    },
    drain: () => {
      relay.drained?.();
      relay.drained = null;
    },
    close: () => {
      // What the daemon sent last reaches stdout before the process exits.
      relay.over = true;
      // Bounded like an in-process serve's flush: a client that never reads must not keep it alive.
      const giveUp = Date.now() + FLUSH_GRACE_MS;
      const flushed = () => (unsettled <= 0 || Date.now() > giveUp ? relay.closed() : setTimeout(flushed, 5));
      flushed();
    },
    error: () => {},
  };
  return "socket" in endpoint
    ? await Bun.connect({ unix: endpoint.socket, socket: handlers })
    : await Bun.connect({ hostname: endpoint.host, port: endpoint.port, socket: handlers });
}

/** Writes all of `bytes`, waiting for the socket to drain when the kernel takes only part. */
async function writeAll(relay: Relay, socket: Socket<undefined>, bytes: Uint8Array): Promise<boolean> {
  let rest = bytes;
  while (rest.length > 0) {
    const n = socket.write(rest);
    if (n < 0) return false;
    rest = rest.subarray(n);
    if (rest.length > 0) await new Promise<void>((resolve) => (relay.drained = resolve));
  }
  return true;
}

/**
 * Relays stdin/stdout to the running daemon until the daemon closes the connection (after stdin
 * ended, once every request read has been answered) or a signal arrives (the connection is cut:
 * the daemon cancels its requests and ends its Session). Returns the exit code, or null when no
 * daemon runs on the data directory.
 */
export async function relayStdio(dataDir: string, env: Record<string, string | undefined>): Promise<number | null> {
  const record = await runningDaemon(dataDir);
  if (!record) return null;
  const closed = Promise.withResolvers<void>();
  const relay: Relay = { over: false, drained: null, closed: closed.resolve };
  let opened: { socket: Socket<undefined>; endpoint: Endpoint } | null = null;
  for (const endpoint of endpointsOf(record)) {
    try {
      opened = { socket: await connect(endpoint, relay), endpoint };
      break;
    } catch {}
  }
  if (!opened) {
    const where = endpointsOf(record).map(endpointText).join(" or ") || "any socket";
    process.stderr.write(
      `devicerail: a devicerail daemon (pid ${record.pid}) holds ${dataDir} but does not answer on ${where}; stop it with \`devicerail daemon stop\`\n`,
    );
    return 1;
  }
  const { socket, endpoint } = opened;
  const token = credentialFor(record, endpoint, env);
  const preamble = `${token === null ? "" : `DEVICERAIL-TOKEN ${token}\n`}${STDIO_RELAY_LINE}`;
  let ended: "input" | "signal" | "output" | null = null;
  const onSignal = () => {
    ended ??= "signal";
    socket.terminate();
  };
  // The client closed its end of stdout: nobody reads the answers any more.
  const onStdoutError = () => {
    ended ??= "output";
    socket.terminate();
  };
  const unlisten = listenWhile([
    [process, "SIGINT", onSignal],
    [process, "SIGTERM", onSignal],
    [process.stdout, "error", onStdoutError],
  ]);
  void (async () => {
    const reader = Bun.stdin.stream().getReader();
    void closed.promise.then(() => reader.cancel().catch(() => {}));
    try {
      if (!(await writeAll(relay, socket, new TextEncoder().encode(preamble)))) return;
      for (;;) {
        const { done, value } = await reader.read();
        if (done && !relay.over) ended ??= "input";
        if (done || !(await writeAll(relay, socket, value))) break;
      }
    } catch {}
    // Half-closed (shutdown(2) of the write side; Bun's end() closes both): the daemon answers what
    // it read, then closes (docs/protocol/transport-and-framing.md#shutdown-and-disconnects).
    if (!relay.over) socket.shutdown();
  })();
  await closed.promise;
  unlisten();
  if (ended !== null) return 0;
  process.stderr.write(`devicerail: the devicerail daemon on ${dataDir} closed the connection (it stopped?)\n`);
  return 1;
}
