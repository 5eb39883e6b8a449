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
  const writer = new FrameWriter(process.stdout);
  const conn = new Connection({ kind: "stdio", framing: "ndjson" }, opts.services, (frame) => writer.write(frame));
  const reader = (opts.input ?? Bun.stdin.stream()).getReader();
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    opts.log.info({ signal }, "shutting down");
    reader.cancel().catch(() => {});
  };
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
        if (pending) await pending;
        continue;
      }
      const text = decodeUtf8Line(frame.bytes);
      if (text === null) {
        const pending = conn.send(checkedFailureFrame(null, errorObject("request_not_utf8", { details: { reason: "invalidUtf8" } })));
        if (pending) await pending;
        continue;
      }
      const pending = opts.dispatcher.handleText(conn, text);
      if (pending) await pending;
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
  await writer.drain();
}
