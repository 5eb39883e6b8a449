/** Harness for the socket e2e tests: a `serve` daemon on TCP and/or a Unix socket, and NDJSON, HTTP and raw clients. */
import { rmSync } from "node:fs";
import type { Socket, Subprocess } from "bun";
import { ROOT, type RpcResponse, daemonCommand, daemonEnv, helloParams } from "../support/daemon.ts";

/**
 * Resolves with `value`, or rejects naming `what` after `ms`, so a hang fails with a message
 * instead of the test timeout. `what` may be a function, for a message read when it fires.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${typeof what === "string" ? what : what()} within ${ms} ms`)), ms);
    }),
  ]);
}

export type Listening = { host?: string; port?: number; socket?: string };

/**
 * `devicerail serve ARGS` with its own data directory (stdin at end of input from the start, which
 * must not stop a socket daemon); the listening line, the rest of stdout, stderr and exit.
 */
export class ServeDaemon {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  readonly exited: Promise<number>;
  readonly dataDir: string;
  stderr = "";
  /** The `{"listening":…}` line's value (after `start` or `listened`). */
  listening: Listening = {};
  private readonly first = Promise.withResolvers<string | null>();
  private readonly rest: Promise<string>;
  /** Each returns true once satisfied (or when told stderr ended) and is then dropped. */
  private stderrWaiters: ((ended?: boolean) => boolean)[] = [];

  constructor(args: string[], env: Record<string, string> = {}) {
    const full = daemonEnv(env);
    this.dataDir = full.DEVICERAIL_DATA_DIR as string;
    const proc = Bun.spawn(daemonCommand(["serve", ...args]), {
      cwd: ROOT,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: full,
    });
    this.proc = proc;
    this.exited = proc.exited;
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) {
        this.stderr += decoder.decode(chunk, { stream: true });
        this.stderrWaiters = this.stderrWaiters.filter((w) => !w());
      }
      for (const w of this.stderrWaiters.splice(0)) w(true);
    })();
    this.rest = (async () => {
      const decoder = new TextDecoder();
      let text = "";
      let gotFirst = false;
      for await (const chunk of proc.stdout) {
        text += decoder.decode(chunk, { stream: true });
        const nl = text.indexOf("\n");
        if (!gotFirst && nl >= 0) {
          gotFirst = true;
          this.first.resolve(text.slice(0, nl));
          text = text.slice(nl + 1);
        }
      }
      if (!gotFirst) this.first.resolve(text === "" ? null : text);
      return gotFirst ? text : "";
    })();
  }

  static async start(args: string[], env: Record<string, string> = {}): Promise<ServeDaemon> {
    const d = new ServeDaemon(args, env);
    await d.listened(15_000);
    return d;
  }

  /** Waits for the listening line and returns (and keeps) its value; throws when the daemon exits without one. */
  async listened(ms = 10_000): Promise<Listening> {
    const line = await within(this.first.promise, ms, () => `no listening line; stderr:\n${this.stderr}`);
    if (line === null) {
      await this.exited;
      throw new Error(`daemon exited (${this.proc.exitCode}) without listening; stderr:\n${this.stderr}`);
    }
    this.listening = (JSON.parse(line) as { listening: Listening }).listening;
    return this.listening;
  }

  get port(): number {
    return this.listening.port as number;
  }

  /** Everything the daemon wrote to stdout after the listening line (read to EOF). */
  stdoutAfterListening(): Promise<string> {
    return this.rest;
  }

  /** Resolves once the daemon's stderr contains `text`; rejects when stderr ends without it. */
  stderrContains(text: string, ms = 10_000): Promise<void> {
    const seen = new Promise<void>((resolve, reject) => {
      const check = (ended?: boolean) => {
        if (this.stderr.includes(text)) resolve();
        else if (ended) reject(new Error(`stderr ended without ${JSON.stringify(text)}:\n${this.stderr}`));
        else return false;
        return true;
      };
      if (!check()) this.stderrWaiters.push(check);
    });
    return within(seen, ms, () => `stderr did not contain ${JSON.stringify(text)}:\n${this.stderr.slice(-2_000)}`);
  }

  /** SIGTERM and the exit code. */
  async stop(): Promise<number> {
    if (this.proc.exitCode === null) this.proc.kill("SIGTERM");
    return this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.proc.exitCode === null && !this.proc.killed) {
      this.proc.kill("SIGTERM");
      const t = setTimeout(() => this.proc.kill("SIGKILL"), 5_000);
      await this.exited;
      clearTimeout(t);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export type Target = { port: number } | { unix: string };

/** An NDJSON JSON-RPC client on TCP or a Unix socket; answers matched by id; `closed` when the server hangs up. */
export class RpcSocket {
  private socket!: Socket<undefined>;
  private buffer = "";
  private nextId = 1;
  private readonly waiting = new Map<string | number, (r: RpcResponse) => void>();
  /** Lines that matched no request of `call` (null ids, ids sent with `writeRaw`), in order. */
  readonly unmatched: string[] = [];
  private unmatchedWaiters: (() => void)[] = [];
  received = "";
  isClosed = false;
  private readonly closedSignal = Promise.withResolvers<void>();
  readonly closed = this.closedSignal.promise;

  static async connect(target: Target, opts: { tokenLine?: string } = {}): Promise<RpcSocket> {
    const c = new RpcSocket();
    const handlers = {
      data: (_s: Socket<undefined>, chunk: Uint8Array) => c.receive(new TextDecoder().decode(chunk)),
      close: () => c.onClose(),
      error: () => c.onClose(),
    };
    c.socket =
      "unix" in target
        ? await Bun.connect({ unix: target.unix, socket: handlers })
        : await Bun.connect({ hostname: "127.0.0.1", port: target.port, socket: handlers });
    if (opts.tokenLine !== undefined) c.writeRaw(`DEVICERAIL-TOKEN ${opts.tokenLine}\n`);
    return c;
  }

  private receive(text: string): void {
    this.received += text;
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      const r = JSON.parse(line) as RpcResponse;
      const w = r.id === null ? undefined : this.waiting.get(r.id);
      if (w && r.id !== null) {
        this.waiting.delete(r.id);
        w(r);
      } else {
        this.unmatched.push(line);
        for (const w of this.unmatchedWaiters.splice(0)) w();
      }
    }
  }

  /** The next line that matched no `call`, parsed. */
  async nextUnmatched(): Promise<RpcResponse> {
    while (this.unmatched.length === 0)
      await within(new Promise<void>((r) => this.unmatchedWaiters.push(r)), 15_000, "no unmatched line");
    return JSON.parse(this.unmatched.shift() as string) as RpcResponse;
  }

  private onClose(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closedSignal.resolve();
  }

  writeRaw(data: string): void {
    this.socket.write(data);
  }

  /** Sends a request; the promise never settles if the connection closes first (race it with `closed`). */
  call(method: string, params?: unknown): Promise<RpcResponse> {
    const id = this.nextId++;
    const answer = new Promise<RpcResponse>((resolve) => this.waiting.set(id, resolve));
    this.writeRaw(`${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`);
    return within(answer, 15_000, `no answer to ${method}`);
  }

  async hello(): Promise<RpcResponse> {
    const r = await this.call("system.hello", helloParams());
    if (!r.result) throw new Error(`hello failed: ${JSON.stringify(r)}`);
    return r;
  }

  /** Abrupt close, as a crashed client's. */
  terminate(): void {
    this.socket.terminate();
  }

  close(): void {
    this.socket.end();
  }
}

/** One raw request on a fresh TCP connection; resolves with everything the server sent until it closed. */
export async function rawExchange(port: number, bytes: string | Uint8Array): Promise<string> {
  let text = "";
  const done = Promise.withResolvers<void>();
  const s = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, chunk) => {
        text += new TextDecoder().decode(chunk);
      },
      close: () => done.resolve(),
      error: () => done.resolve(),
    },
  });
  s.write(bytes);
  await within(done.promise, 15_000, "the server did not close the raw connection");
  return text;
}

/** The status code of a raw HTTP response ("HTTP/1.1 403 Forbidden…" → 403). */
export const statusOf = (response: string): number => Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0);

/** The Sessions the daemon has recorded, read over a fresh NDJSON connection. */
export async function sessionsOf(target: Target, tokenLine?: string): Promise<{ id: string; state: string }[]> {
  const c = await RpcSocket.connect(target, { tokenLine });
  await c.hello();
  const list = await c.call("sessions.list");
  c.close();
  return list.result;
}
