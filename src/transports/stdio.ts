import type { Dispatcher } from "../rpc/dispatcher.ts";
import { Connection } from "../rpc/connection.ts";
import type { ServerServices } from "../rpc/handshake.ts";
import { errorObject } from "../protocol/errors.ts";
import { checkedFailureFrame } from "../rpc/encode.ts";
import { LineSplitter, MAX_LINE_BYTES, decodeUtf8Line, type Frame } from "../rpc/ndjson.ts";
import type { Logger } from "../rpc/rpc-error.ts";
import { FrameWriter } from "./frame-writer.ts";

export interface StdioOptions {
  dispatcher: Dispatcher;
  services: ServerServices;
  log: Logger;
  input?: ReadableStream<Uint8Array>;
}

/**
 * Serves one control connection on stdin/stdout (NDJSON). Resolves after a graceful shutdown
 * (EOF, SIGINT or SIGTERM): admission stopped, in-flight requests cancelled, output flushed.
 */
export async function serveStdio(opts: StdioOptions): Promise<void> {
  let stopping = false;
  // Resolves on stop, so a loop parked on backpressure from a client that never reads wakes up.
  const stopped = Promise.withResolvers<void>();
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    opts.log.info({ signal: why }, "shutting down");
    stopped.resolve();
    reader.cancel().catch(() => {});
  };
  const woken = (pending: Promise<void>) => Promise.race([pending, stopped.promise]);
  // The client closed its end of stdout: nobody can read answers any more, so this is the end of
  // the connection (like EOF), not something to retry.
  const writer = new FrameWriter(process.stdout, (err) => {
    opts.log.warn({ err: err.message }, "stdout closed by the client");
    stop("stdout closed");
  });
  const conn = new Connection({ kind: "stdio", framing: "ndjson" }, opts.services, (frame) => writer.write(frame));
  const reader = (opts.input ?? Bun.stdin.stream()).getReader();
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  const onSigint = () => stop("SIGINT");
  const onSigterm = () => stop("SIGTERM");
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);

  const handle = async (frames: Frame[]) => {
    for (const frame of frames) {
      if (stopping) return;
      if (frame.kind === "oversized") {
        const pending = conn.send(
          checkedFailureFrame(
            null,
            errorObject("request_line_too_large", { details: { actualBytesAtLeast: frame.bytesAtLeast, limitBytes: MAX_LINE_BYTES } }),
          ),
        );
        if (pending) await woken(pending);
        continue;
      }
      const text = decodeUtf8Line(frame.bytes);
      if (text === null) {
        const pending = conn.send(checkedFailureFrame(null, errorObject("request_not_utf8", { details: { reason: "invalidUtf8" } })));
        if (pending) await woken(pending);
        continue;
      }
      // Awaiting only a real promise keeps pipelined lines free of a microtask hop each.
      const pending = opts.dispatcher.handleText(conn, text);
      if (pending) await woken(pending);
    }
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || stopping) break;
      await handle(splitter.push(value));
    }
    if (!stopping) await handle(splitter.end());
  } catch (err) {
    if (!stopping) opts.log.error({ err }, "stdin failed");
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
  }
  await opts.dispatcher.close(conn, "daemon shutdown");
  // A client that is still attached but never reads must not keep the daemon alive.
  await Promise.race([writer.drain(), new Promise((resolve) => setTimeout(resolve, FLUSH_GRACE_MS).unref?.())]);
}

/** How long shutdown waits for the client to take the last responses (the reference's 5 s). */
const FLUSH_GRACE_MS = 5_000;
