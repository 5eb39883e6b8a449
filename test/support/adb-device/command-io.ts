/** What a simulated device command sees: argv, stdin, stdout/stderr and a signal. No transport knowledge. */

export interface CommandIo {
  readonly stdin: StdinReader;
  out(data: string | Uint8Array): void;
  err(data: string | Uint8Array): void;
  /** Aborted when the host closes the stream or the transport is lost. */
  readonly signal: AbortSignal;
  /** Drops the whole transport at once, as pulling the cable does. */
  unplug(): void;
  /** The pid of the process the command runs in (processes.ts), where the phone keeps one. */
  readonly pid?: number;
}

export interface StdinReader {
  /** The next chunk, or null at end of input. */
  read(): Promise<Uint8Array | null>;
  /** Everything up to end of input. */
  readAll(): Promise<Uint8Array>;
  /** The next line without its `\n`, or null at end of input. */
  readLine(): Promise<string | null>;
}

/** A device command: returns the exit status. Tests register these in FakePhone.commands. */
export type CommandFn = (argv: readonly string[], io: CommandIo) => number | Promise<number>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const bytes = (data: string | Uint8Array): Uint8Array =>
  typeof data === "string" ? encoder.encode(data) : data;
export const text = (data: Uint8Array): string => decoder.decode(data);

export const concat = (parts: readonly Uint8Array[]): Uint8Array => Bun.concatArrayBuffers([...parts], Infinity, true);

/**
 * Stdin as it arrives from the host (shell_v2 stdin packets or raw WRTEs). Keeps a copy of every
 * byte so a test can show what crossed on stdin rather than in the command line.
 */
export class StdinBuffer implements StdinReader {
  private readonly queue: Uint8Array[] = [];
  private readonly received: Uint8Array[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  push(data: Uint8Array): void {
    if (this.ended || data.length === 0) return;
    this.queue.push(data);
    this.received.push(data);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Every byte pushed so far, consumed or not. */
  receivedBytes(): Uint8Array {
    return concat(this.received);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async read(): Promise<Uint8Array | null> {
    while (this.queue.length === 0 && !this.ended) await new Promise<void>((r) => (this.wake = r));
    return this.queue.shift() ?? null;
  }

  async readAll(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for (let c = await this.read(); c; c = await this.read()) parts.push(c);
    return concat(parts);
  }

  async readLine(): Promise<string | null> {
    const parts: Uint8Array[] = [];
    for (;;) {
      const c = await this.read();
      if (!c) return parts.length ? text(concat(parts)) : null;
      const nl = c.indexOf(10);
      if (nl < 0) {
        parts.push(c);
        continue;
      }
      parts.push(c.subarray(0, nl));
      if (nl + 1 < c.length) this.queue.unshift(c.subarray(nl + 1));
      return text(concat(parts));
    }
  }
}

/** Stdin that is already at its end. */
export const EMPTY_STDIN: StdinReader = {
  read: async () => null,
  readAll: async () => new Uint8Array(0),
  readLine: async () => null,
};

/** Resolves after `ms`, or at once when `signal` aborts (a slow command must still stop when closed). */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Never resolves until `signal` aborts: a hung device-side process. */
export function hang(signal: AbortSignal): Promise<void> {
  return delay(2 ** 31 - 1, signal);
}
