import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import type { Logger } from "../protocol/rpc-error.ts";
import { type ByteChannel, NdjsonConnection } from "./ndjson-connection.ts";
import { streamSink } from "./outbox.ts";
import { listenWhile } from "./listeners.ts";

export interface StdioOptions {
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
  input?: ReadableStream<Uint8Array>;
  /** After stdin ends, how long a request without timeoutMs may still run (DEVICERAIL_END_OF_INPUT_MS). */
  endOfInputMs?: number;
}

/** How long shutdown waits for the client to take the last responses (the reference's 5 s). */
const FLUSH_GRACE_MS = 5_000;

/**
 * Serves one control connection on stdin/stdout (NDJSON). Resolves after a graceful shutdown: on
 * EOF once every request read has been answered (each within its own deadline); on SIGINT or
 * SIGTERM with admission stopped and in-flight requests cancelled; then output flushed (bounded:
 * a client that is still attached but never reads must not keep the daemon alive).
 */
export async function serveStdio(opts: StdioOptions): Promise<void> {
  const reader = (opts.input ?? Bun.stdin.stream()).getReader();
  // stdin is read by the loop below; pausing it means not asking for the next chunk.
  let resume: (() => void) | null = null;
  const channel: ByteChannel = {
    output: streamSink(process.stdout),
    setReading: (reading) => {
      if (reading) {
        resume?.();
        resume = null;
      } else resume ??= () => {};
      return true;
    },
    end: () => {},
    terminate: () => {},
  };
  const connection = new NdjsonConnection(channel, {
    transport: { kind: "stdio", framing: "ndjson" },
    services: opts.services,
    dispatcher: opts.dispatcher,
    log: opts.log,
    label: "stdio",
    closeReason: "daemon shutdown",
    flushGraceMs: FLUSH_GRACE_MS,
    endOfInputMs: opts.endOfInputMs,
    // stdin is read only while the loop is not paused, however large one read is.
    maxQueuedInputBytes: Number.POSITIVE_INFINITY,
  });
  // Once the connection is over (a signal, stdout gone, an overflow) nothing more is read.
  let over = false;
  void connection.finished.then(() => {
    over = true;
    resume?.();
    reader.cancel().catch(() => {});
  });
  const stop = (why: string) => {
    opts.log.info({ signal: why }, "shutting down");
    void connection.shutdown();
  };
  const onSigint = () => stop("SIGINT");
  const onSigterm = () => stop("SIGTERM");
  const onDrain = () => connection.writable();
  // The client closed its end of stdout: nobody can read answers any more, so this is the end of
  // the connection (like EOF), not something to retry.
  const onError = (err: Error) => {
    opts.log.warn({ err: err.message }, "stdout closed by the client");
    connection.gone(err);
  };
  const unlisten = listenWhile([
    [process, "SIGINT", onSigint],
    [process, "SIGTERM", onSigterm],
    [process.stdout, "drain", onDrain],
    [process.stdout, "error", onError],
  ]);
  try {
    while (!over) {
      if (resume) await new Promise<void>((r) => (resume = r));
      const { done, value } = await reader.read();
      if (done || over) break;
      connection.receive(value);
    }
    connection.endOfInput();
  } catch (err) {
    if (!over) opts.log.error({ err }, "stdin failed");
    connection.endOfInput();
  }
  // Kept until the connection is over: after EOF, requests still running are answered first, and a
  // signal meanwhile cancels them (docs/protocol/transport-and-framing.md#shutdown-and-disconnects).
  await connection.finished;
  unlisten();
}
