import { describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ALL_FEATURES, type RpcResponse, helloParams, spawnDaemon } from "../support/daemon.ts";
import { LineClient } from "../support/line-client.ts";
import { ServeDaemon, within } from "./serve-daemon.ts";

const MiB = 1_048_576;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const err = (code: number, dataCode: string, message: string, retryable: boolean, details: unknown) => ({
  code,
  message,
  data: { code: dataCode, message, retryable, details },
});
const HANDSHAKE_REQUIRED = err(
  -32001,
  "handshake_required",
  "system.hello must succeed before any other method",
  true,
  {
    requiredMethod: "system.hello",
  },
);

const TEST_CLIENT = { name: "devicerail-tests", version: "1.0.0" };

/** system.describe's result for a connection; the device route depends on the registered devices, not on the transport. */
const describeResult = (hello: RpcResponse, client: { name: string; version: string }, deviceId: string | null) => ({
  connection: hello.result,
  client,
  deviceId,
  activeSessionId: null,
});

/** The listening line's port, after checking the line names loopback. */
async function portOf(daemon: ServeDaemon): Promise<number> {
  expect(await daemon.listened()).toEqual({ host: "127.0.0.1", port: expect.any(Number) });
  return daemon.port;
}

async function startDaemon(env: Record<string, string> = {}): Promise<{ daemon: ServeDaemon; port: number }> {
  const daemon = new ServeDaemon(["--listen", "127.0.0.1:0"], env);
  return { daemon, port: await portOf(daemon) };
}

/** A minimal NDJSON client on a Bun TCP socket: queued writes with drain, response lines in order. */
class Client extends LineClient {
  private socket!: Socket<undefined>;
  private outbox: Uint8Array[] = [];
  private drained: (() => void)[] = [];
  isClosed = false;
  private readonly closedSignal = Promise.withResolvers<void>();
  /** Resolves when the server (or this client) closed the connection. */
  readonly closed = this.closedSignal.promise;

  static async connect(port: number): Promise<Client> {
    const c = new Client();
    c.socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_s, chunk) => c.receive(chunk),
        drain: () => c.flush(),
        close: () => c.onClose(),
        error: () => c.onClose(),
      },
    });
    return c;
  }

  private onClose(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.endOfInput();
    this.closedSignal.resolve();
  }

  /** Bun's `write` takes what the kernel accepts; the rest is written on `drain`, in order. */
  private flush(): void {
    while (this.outbox.length > 0) {
      const head = this.outbox[0]!;
      const n = this.socket.write(head);
      if (n < 0) {
        this.outbox = [];
        break;
      }
      if (n < head.length) {
        this.outbox[0] = head.subarray(n);
        return;
      }
      this.outbox.shift();
    }
    for (const d of this.drained.splice(0)) d();
  }

  writeRaw(data: string | Uint8Array): void {
    this.outbox.push(typeof data === "string" ? new TextEncoder().encode(data) : data);
    if (this.outbox.length === 1) this.flush();
  }

  /** Resolves once every byte written so far was handed to the kernel. */
  writesDone(): Promise<void> {
    if (this.outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Stops reading from the kernel (Bun sockets have pause/resume at runtime, not in their types). */
  pauseReading(): void {
    const s = this.socket as unknown as { pause(): void };
    expect(typeof s.pause).toBe("function");
    s.pause();
  }

  resumeReading(): void {
    (this.socket as unknown as { resume(): void }).resume();
  }

  /** Half-close: no more requests, answers still readable. */
  shutdownWrites(): void {
    this.socket.shutdown();
  }
}

const connectAll = (port: number, n: number) => Promise.all(Array.from({ length: n }, () => Client.connect(port)));

describe("TCP transport", () => {
  test("hello answers the tcp transport and enables what stdio enables, events.stream.v1 included, when it is offered", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    await using stdio = spawnDaemon();
    const onStdio: string[] = (await stdio.hello({ optional: ALL_FEATURES })).result.features.enabled;
    expect(onStdio).toContain("events.stream.v1");
    const c = await Client.connect(port);
    const hello = await c.call("system.hello", helloParams({ optional: ALL_FEATURES }));
    expect(hello).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        connectionId: expect.stringMatching(UUID),
        protocol: { selected: { major: 1, minor: 5 } },
        server: { name: "devicerail-daemon", version: expect.any(String) },
        transport: { kind: "tcp", framing: "ndjson" },
        features: { enabled: onStdio },
      },
    });
    // A client may require it, as on stdio.
    const d = await Client.connect(port);
    const required = await d.call("system.hello", helloParams({ required: ["events.stream.v1"], optional: [] }));
    expect(required.result.features.enabled).toEqual(["events.stream.v1"]);
  });

  test("connections have independent handshakes and connection ids when two clients are open", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const [a, b] = (await connectAll(port, 2)) as [Client, Client];
    const helloA = await a.hello();
    expect(await b.call("system.describe")).toEqual({ jsonrpc: "2.0", id: 1, error: HANDSHAKE_REQUIRED });
    const describeA = await a.call("system.describe");
    expect(describeA).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: describeResult(helloA, TEST_CLIENT, describeA.result.deviceId),
    });
    expect(await b.call("system.describe")).toEqual({ jsonrpc: "2.0", id: 2, error: HANDSHAKE_REQUIRED });
    const helloB = await b.hello();
    expect(helloB.result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
    expect(helloB.result.connectionId).not.toBe(helloA.result.connectionId);
    expect((await a.call("system.hello", helloParams())).error?.data.code).toBe("handshake_already_completed");
  });

  test("all succeed when 32 connections each do hello, system.describe and devices.list concurrently", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const clients = await connectAll(port, 32);
    const results = await Promise.all(
      clients.map(async (c) => {
        const hello = await c.hello();
        const describe = await c.call("system.describe");
        const devices = await c.call("devices.list");
        return { hello, describe, devices };
      }),
    );
    // Connections share one device registry, so all see the same devices and the same default route.
    const reference = results[0]!;
    expect(reference.devices).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { devices: expect.any(Array), selectedDeviceId: reference.describe.result.deviceId },
    });
    for (const { hello, describe, devices } of results) {
      expect(describe).toEqual({
        jsonrpc: "2.0",
        id: 2,
        result: describeResult(hello, TEST_CLIENT, reference.describe.result.deviceId),
      });
      expect(devices).toEqual(reference.devices);
    }
    expect(new Set(results.map((r) => r.hello.result.connectionId)).size).toBe(32);
  });

  test("a line split across TCP writes is answered when cut at several offsets", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const c = await Client.connect(port);
    await c.hello();
    const id = "ü-ñ-🚀-id";
    const bytes = new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id, method: "sessions.list" })}\r\n`);
    const rocket = new TextEncoder().encode(`{"jsonrpc":"2.0","id":"ü-ñ-`).length + 1; // inside the 4-byte 🚀
    const cuts: number[][] = [
      [1],
      [rocket],
      [bytes.length - 2],
      [bytes.length - 1],
      [3, rocket, 40],
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
    ];
    for (const offsets of cuts) {
      let from = 0;
      for (const to of [...offsets, bytes.length]) {
        c.writeRaw(bytes.slice(from, to));
        from = to;
      }
      expect(await c.next()).toEqual({ jsonrpc: "2.0", id, result: [] });
    }
  });

  test("an oversized line and invalid UTF-8 are answered with a null id when the connection keeps working", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const c = await Client.connect(port);
    await c.hello();
    const line = `{"jsonrpc":"2.0","id":"big","method":"sessions.list"${" ".repeat(MiB)}}`;
    c.writeRaw(`${line}\n`);
    expect(await c.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: err(-32600, "invalid_request", "request line exceeds the 1048576-byte limit", false, {
        actualBytesAtLeast: line.length,
        limitBytes: MiB,
      }),
    });
    c.writeRaw(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]));
    expect(await c.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: err(-32700, "parse_error", "request line is not valid UTF-8", false, { reason: "invalidUtf8" }),
    });
    expect(await c.call("sessions.list")).toEqual({ jsonrpc: "2.0", id: 2, result: [] });
  });

  test("a connection that finishes its hello when 256 are working is closed, and the working ones keep going", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    // In batches, so the pending ones never exceed their own limit (64) and shed each other.
    const working: Client[] = [];
    for (let i = 0; i < 4; i++) {
      const batch = await connectAll(port, 64);
      await Promise.all(batch.map((c) => c.hello()));
      working.push(...batch);
    }
    const extra = await Client.connect(port);
    extra.writeRaw(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() })}\n`);
    await within(extra.closed, 5_000, () => "the 257th working connection was not closed");
    const described = await Promise.all(working.map((c) => c.call("system.describe")));
    expect(described.map((r) => r.result?.connection.transport)).toEqual(
      Array(256).fill({ kind: "tcp", framing: "ndjson" }),
    );
    expect(working.filter((c) => c.isClosed)).toEqual([]);
    await daemon.stderrContains('"refusedOverWorkingLimit":1');
  }, 30_000);

  for (const address of ["0.0.0.0:0", "192.0.2.1:0", "[::]:0", "localhost:0"])
    test(`start-up fails with exit 2 naming the address when --listen is the non-loopback ${address}`, async () => {
      await using daemon = new ServeDaemon(["--listen", address]);
      expect(await daemon.exited).toBe(2);
      const host = address.slice(0, address.lastIndexOf(":")).replace(/^\[(.*)\]$/, "$1");
      expect(daemon.stderr).toContain(`cannot listen on ${address}: refusing to listen on ${JSON.stringify(host)}`);
      expect(await daemon.stdoutAfterListening()).toBe("");
    });

  test("start-up fails with exit 2 when DEVICERAIL_RPC_LISTEN is not HOST:PORT", async () => {
    await using daemon = new ServeDaemon([], { DEVICERAIL_RPC_LISTEN: "127.0.0.1" });
    expect(await daemon.exited).toBe(2);
    expect(daemon.stderr).toContain('invalid DEVICERAIL_RPC_LISTEN="127.0.0.1"');
  });

  test("DEVICERAIL_RPC_LISTEN serves TCP when no flag is given", async () => {
    await using daemon = new ServeDaemon([], { DEVICERAIL_RPC_LISTEN: "127.0.0.1:0" });
    const c = await Client.connect(await portOf(daemon));
    expect((await c.hello()).result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
  });

  test("SIGTERM closes client sockets when connections are open and the daemon exits 0", async () => {
    const { daemon, port } = await startDaemon({ DEVICERAIL_LOG_LEVEL: "info" });
    await using _ = daemon;
    const [a, b] = (await connectAll(port, 2)) as [Client, Client];
    await a.hello();
    expect(await b.call("system.describe")).toEqual({ jsonrpc: "2.0", id: 1, error: HANDSHAKE_REQUIRED });
    daemon.proc.kill("SIGTERM");
    await within(Promise.all([a.closed, b.closed]), 5_000, () => "client sockets were not closed");
    expect(await daemon.exited).toBe(0);
    expect(await daemon.stdoutAfterListening()).toBe("");
    expect(daemon.stderr).toContain('"msg":"devicerail stopped"');
  });

  test("SIGTERM exits 0 within the flush grace when a client has stopped reading", async () => {
    const { daemon, port } = await startDaemon({ DEVICERAIL_LOG_LEVEL: "debug" });
    await using _ = daemon;
    const c = await Client.connect(port);
    await c.call("system.hello", { ...helloParams(), client: { name: "n".repeat(200_000), version: "1" } });
    c.pauseReading();
    let batch = "";
    for (let i = 0; i < 200; i++) batch += `{"jsonrpc":"2.0","id":${i},"method":"system.describe"}\n`;
    c.writeRaw(batch);
    await daemon.stderrContains("TCP output backed up");
    const t0 = performance.now();
    daemon.proc.kill("SIGTERM");
    expect(await within(daemon.exited, 8_000, () => "the daemon did not exit")).toBe(0);
    // The 2 s flush grace, plus process start-up noise; far below the stdio transport's 5 s.
    expect(performance.now() - t0).toBeLessThan(4_500);
  }, 15_000);

  test("a client that half-closes gets every answer when the server then closes the connection", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const c = await Client.connect(port);
    c.writeRaw(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() })}\n` +
        '{"jsonrpc":"2.0","id":2,"method":"sessions.list"}\n{"jsonrpc":"2.0","id":3,"method":"sessions.list"}',
    );
    await c.writesDone();
    c.shutdownWrites();
    expect((await c.next()).result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
    expect(await c.next()).toEqual({ jsonrpc: "2.0", id: 2, result: [] });
    expect(await c.next()).toEqual({ jsonrpc: "2.0", id: 3, result: [] });
    await within(c.closed, 5_000, () => "the server did not close the half-closed connection");
  });

  test("all responses arrive in order when a client sends many requests before it starts reading", async () => {
    const { daemon, port } = await startDaemon({ DEVICERAIL_LOG_LEVEL: "debug" });
    await using _ = daemon;
    const c = await Client.connect(port);
    // A 200 kB client name makes every system.describe answer ~200 kB: 400 of them are far more
    // than the kernel's socket buffers hold, so the daemon must hold back instead of queueing 80 MB.
    const name = "n".repeat(200_000);
    const hello = await c.call("system.hello", { ...helloParams(), client: { name, version: "1" } });
    const first = await c.call("system.describe", undefined, { id: "first" });
    expect(first).toEqual({
      jsonrpc: "2.0",
      id: "first",
      result: describeResult(hello, { name, version: "1" }, first.result.deviceId),
    });
    const n = 400;
    c.pauseReading();
    let batch = "";
    for (let i = 0; i < n; i++) batch += `{"jsonrpc":"2.0","id":${i},"method":"system.describe"}\n`;
    c.writeRaw(batch);
    await daemon.stderrContains("TCP output backed up");
    c.resumeReading();
    for (let i = 0; i < n; i++) expect(await c.next()).toEqual({ jsonrpc: "2.0", id: i, result: first.result });
    expect(await c.call("sessions.list")).toEqual({ jsonrpc: "2.0", id: 2, result: [] });
  }, 30_000);

  test("the chosen port is written to listen.json with mode 0600 and removed on shutdown when --listen asks for port 0", async () => {
    const before = Date.now();
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const file = join(daemon.dataDir, "listen.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(written).toEqual({
      pid: daemon.proc.pid,
      version: expect.any(String),
      state: "serving",
      host: "127.0.0.1",
      port,
      startedAtMs: expect.any(Number),
    });
    expect(written.startedAtMs).toBeGreaterThanOrEqual(before);
    daemon.proc.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  test("listen.json names the port too when --listen names it, so the CLI finds the daemon", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const free = probe.port;
    probe.stop(true);
    await using daemon = new ServeDaemon(["--listen", `127.0.0.1:${free}`]);
    expect(await portOf(daemon)).toBe(free);
    expect(JSON.parse(readFileSync(join(daemon.dataDir, "listen.json"), "utf8"))).toMatchObject({
      pid: daemon.proc.pid,
      host: "127.0.0.1",
      port: free,
    });
  });

  test("a connection is closed without an answer when its first byte is neither JSON nor an HTTP request line", async () => {
    const { daemon, port } = await startDaemon();
    await using _ = daemon;
    const c = await Client.connect(port);
    // The start of a TLS ClientHello.
    c.writeRaw(new Uint8Array([0x16, 0x03, 0x01, 0x00, 0xa5]));
    await within(c.closed, 5_000, () => "the connection was not closed");
    expect(await c.nextLine()).toBeNull();
    await daemon.stderrContains("the first byte is neither JSON nor an HTTP request line");
  });
});
