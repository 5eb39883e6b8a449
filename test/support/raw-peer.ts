/**
 * Clients that can die the way real ones do. node:net's resetAndDestroy sets SO_LINGER 0 before
 * close(2), so the kernel answers with a TCP RST (on a Unix socket it is an abrupt close with
 * unread data): the daemon sees ECONNRESET, exactly as when a CI runner is killed.
 */
import net from "node:net";
import { createHash, randomBytes } from "node:crypto";

export type PeerTarget = { port: number; host?: string } | { unix: string };

const connectOptions = (t: PeerTarget): net.NetConnectOpts =>
  "unix" in t ? { path: t.unix } : { port: t.port, host: t.host ?? "127.0.0.1" };

/** Resolves with a connected socket, or rejects with the connect error. */
export function connectRaw(target: PeerTarget): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(connectOptions(target), () => {
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", reject);
  });
}

/** Abrupt death: RST on TCP, a close with unread data on a Unix socket. */
export function reset(socket: net.Socket): void {
  socket.resetAndDestroy();
}

/** Waiters woken whenever something arrived or the socket closed. */
class Signal {
  private waiters: (() => void)[] = [];
  wait(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }
  wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** An NDJSON JSON-RPC peer on a raw socket: lines in arrival order, no id matching. */
export class RawNdjsonPeer {
  readonly lines: string[] = [];
  closed = false;
  private buffer = "";
  private readonly signal = new Signal();
  private nextId = 1;

  private constructor(readonly socket: net.Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      this.buffer += text;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        this.lines.push(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
      }
      this.signal.wake();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.signal.wake();
    });
  }

  static async connect(target: PeerTarget): Promise<RawNdjsonPeer> {
    return new RawNdjsonPeer(await connectRaw(target));
  }

  /** Writes one request and returns its id. */
  send(method: string, params?: unknown): number {
    const id = this.nextId++;
    this.socket.write(
      `${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`,
    );
    return id;
  }

  /** Resolves once `count` lines have arrived; rejects when the socket closes first. */
  async waitLines(count: number): Promise<string[]> {
    while (this.lines.length < count) {
      if (this.closed) throw new Error(`connection closed after ${this.lines.length} of ${count} lines`);
      await this.signal.wait();
    }
    return this.lines;
  }

  /** The answer to request `id` (parsed), waiting for it. */
  async answer(id: number): Promise<any> {
    for (let seen = 0; ; ) {
      for (; seen < this.lines.length; seen++) {
        const msg = JSON.parse(this.lines[seen] as string);
        if (msg.id === id) return msg;
      }
      await this.waitLines(seen + 1);
    }
  }

  async call(method: string, params?: unknown): Promise<any> {
    return this.answer(this.send(method, params));
  }

  reset(): void {
    reset(this.socket);
  }

  end(): void {
    this.socket.end();
  }
}

/**
 * A WebSocket client on a raw socket (RFC 6455: masked text frames out, unmasked frames in), so
 * the test decides how it dies: with a RST and no Close frame.
 */
export class RawWebSocket {
  readonly messages: string[] = [];
  closed = false;
  /** The close code the server sent, if it sent a Close frame. */
  closeCode: number | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly signal = new Signal();

  private constructor(readonly socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
      this.signal.wake();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.signal.wake();
    });
  }

  /**
   * Connects and upgrades `path`; rejects with the status line when the server refuses.
   * `host` is the Host header (the daemon checks it on loopback TCP).
   */
  static async open(
    target: PeerTarget,
    path: string,
    opts: { host?: string; protocol?: string; headers?: Record<string, string> } = {},
  ): Promise<RawWebSocket> {
    const socket = await connectRaw(target);
    const key = randomBytes(16).toString("base64");
    const host = opts.host ?? ("port" in target ? `127.0.0.1:${target.port}` : "localhost");
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: ${host}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${key}`,
      "Sec-WebSocket-Version: 13",
    ];
    if (opts.protocol) lines.push(`Sec-WebSocket-Protocol: ${opts.protocol}`);
    for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    const head = await new Promise<{ head: string; rest: Buffer }>((resolve, reject) => {
      let got = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        const end = got.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.off("data", onData);
        socket.off("close", onClose);
        resolve({ head: got.subarray(0, end).toString("latin1"), rest: got.subarray(end + 4) });
      };
      const onClose = () => reject(new Error("closed during the WebSocket upgrade"));
      socket.on("data", onData);
      socket.once("close", onClose);
    });
    if (!head.head.startsWith("HTTP/1.1 101")) {
      socket.destroy();
      throw new Error(`upgrade refused: ${head.head.split("\r\n")[0]}`);
    }
    const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
    if (!head.head.includes(`Sec-WebSocket-Accept: ${accept}`)) throw new Error("bad Sec-WebSocket-Accept");
    const ws = new RawWebSocket(socket);
    if (head.rest.length > 0) {
      ws.buffer = head.rest;
      ws.parse();
    }
    return ws;
  }

  /** Sends one masked text frame. */
  sendText(text: string): void {
    this.socket.write(maskedTextFrame(text));
  }

  sendJson(value: unknown): void {
    this.sendText(JSON.stringify(value));
  }

  /** Resolves once `count` text messages have arrived; rejects when the socket closes first. */
  async waitMessages(count: number): Promise<any[]> {
    while (this.messages.length < count) {
      if (this.closed)
        throw new Error(
          `WebSocket closed after ${this.messages.length} of ${count} messages (close code ${this.closeCode})`,
        );
      await this.signal.wait();
    }
    return this.messages.map((m) => JSON.parse(m));
  }

  reset(): void {
    reset(this.socket);
  }

  private parse(): void {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const opcode = (b[0] as number) & 0x0f;
      let len = (b[1] as number) & 0x7f;
      let off = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        off = 10;
      }
      if (b.length < off + len) return;
      const payload = b.subarray(off, off + len);
      this.buffer = b.subarray(off + len);
      if (opcode === 0x1) this.messages.push(payload.toString("utf8"));
      else if (opcode === 0x8) this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : null;
    }
  }
}

/** One client text frame, masked as RFC 6455 §5.3 requires of clients. */
export function maskedTextFrame(text: string): Uint8Array {
  const payload = Buffer.from(text, "utf8");
  const n = payload.length;
  const head =
    n < 126
      ? Buffer.from([0x81, 0x80 | n])
      : n < 65_536
        ? Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff])
        : Buffer.alloc(10);
  if (n >= 65_536) {
    head[0] = 0x81;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  const mask = randomBytes(4);
  const out = Buffer.alloc(head.length + 4 + n);
  head.copy(out);
  mask.copy(out, head.length);
  for (let i = 0; i < n; i++) out[head.length + 4 + i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return out;
}
