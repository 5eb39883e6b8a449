import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { helloParams } from "../support/daemon.ts";
import { RpcSocket, ServeDaemon, type Target, sessionsOf, within } from "./serve-daemon.ts";

const TOKEN = `tok-${crypto.randomUUID()}`;
const LISTEN = ["--listen", "127.0.0.1:0"];

/** Resolves with the first answer, or "closed" when the server hung up without one. */
const answerOrClose = (c: RpcSocket) =>
  Promise.race([c.call("system.hello", helloParams()), c.closed.then(() => "closed" as const)]);

/** A JSON-RPC-over-WebSocket client: opens, or reports how the upgrade was refused. */
async function openWs(port: number, headers: Record<string, string>) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`, { headers } as never);
  const messages: any[] = [];
  const next = () =>
    new Promise<any>((resolve) =>
      ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data))), { once: true }),
    );
  const opened = await new Promise<boolean>((resolve) => {
    ws.addEventListener("open", () => resolve(true));
    ws.addEventListener("error", () => resolve(false));
  });
  return { ws, opened, messages, next };
}

describe("token authentication", () => {
  test("--listen on all interfaces starts only with a token, and then every connection must authenticate", async () => {
    await using d = await ServeDaemon.start(["--listen", "0.0.0.0:0"], { DEVICERAIL_TOKEN: TOKEN });
    expect(d.listening).toEqual({ host: "0.0.0.0", port: expect.any(Number) });
    const anonymous = await RpcSocket.connect({ port: d.port });
    expect(await within(answerOrClose(anonymous), 10_000, "no answer")).toBe("closed");
    const authenticated = await RpcSocket.connect({ port: d.port }, { tokenLine: TOKEN });
    expect((await authenticated.hello()).result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
  });

  test("an NDJSON connection is closed without an answer when its first line is JSON-RPC, a wrong token or an overlong line", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_TOKEN: TOKEN, DEVICERAIL_LOG_LEVEL: "debug" });
    for (const tokenLine of [undefined, `${TOKEN}x`, TOKEN.slice(1), "x".repeat(2_000)]) {
      const c = await RpcSocket.connect({ port: d.port }, { tokenLine });
      expect(await within(answerOrClose(c), 10_000, "no answer")).toBe("closed");
      expect(c.received).toBe("");
    }
    // The token line and the first request may arrive in one write; a CRLF ending is accepted.
    const c = await RpcSocket.connect({ port: d.port });
    c.writeRaw(
      `DEVICERAIL-TOKEN ${TOKEN}\r\n${JSON.stringify({ jsonrpc: "2.0", id: "h", method: "system.hello", params: helloParams() })}\n`,
    );
    expect((await c.nextUnmatched()).result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
    expect(d.stderr).toContain("authentication failed: wrong token");
    expect(d.stderr).not.toContain(TOKEN.slice(4));
  });

  test("the stdio relay line after the token line makes the connection report stdio; before it, it is refused", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_TOKEN: TOKEN });
    const hello = `${JSON.stringify({ jsonrpc: "2.0", id: "h", method: "system.hello", params: helloParams() })}\n`;
    // In separate writes too: the relay line may arrive after the token line, even cut in two.
    const relayed = await RpcSocket.connect({ port: d.port });
    relayed.writeRaw(`DEVICERAIL-TOKEN ${TOKEN}\n`);
    await Bun.sleep(50);
    relayed.writeRaw("DEVICERAIL-");
    await Bun.sleep(50);
    relayed.writeRaw(`STDIO\n${hello}`);
    expect((await relayed.nextUnmatched()).result.transport).toEqual({ kind: "stdio", framing: "ndjson" });
    // Without it, a line after the token line is NDJSON, even one that begins like the relay line.
    const plain = await RpcSocket.connect({ port: d.port });
    plain.writeRaw(`DEVICERAIL-TOKEN ${TOKEN}\nDEVICERAIL-STDIN\n${hello}`);
    expect((await plain.nextUnmatched()).error?.data.code).toBe("parse_error");
    expect((await plain.nextUnmatched()).result.transport).toEqual({ kind: "tcp", framing: "ndjson" });
    const early = await RpcSocket.connect({ port: d.port });
    early.writeRaw(`DEVICERAIL-STDIO\nDEVICERAIL-TOKEN ${TOKEN}\n${hello}`);
    expect(
      await within(
        early.closed.then(() => "closed"),
        10_000,
        "still open",
      ),
    ).toBe("closed");
    expect(early.received).toBe("");
  });

  test("HTTP answers 401 without running the handler when the bearer token is missing or wrong", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_TOKEN: TOKEN });
    const url = `http://127.0.0.1:${d.port}/devices/_/actions/tap`;
    const post = (auth?: string) =>
      fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(auth ? { Authorization: auth } : {}) },
        body: '{"x":1,"y":1}',
      });
    const missing = await post();
    expect([
      missing.status,
      missing.headers.get("www-authenticate"),
      ((await missing.json()) as any).error.data.code,
    ]).toEqual([401, "Bearer", "authentication_required"]);
    for (const auth of [`Bearer ${TOKEN}x`, `Basic ${btoa(`u:${TOKEN}`)}`, TOKEN]) {
      const wrong = await post(auth);
      expect([wrong.status, ((await wrong.json()) as any).error.data.code]).toEqual([401, "authentication_failed"]);
    }
    const target: Target = { port: d.port };
    expect(await sessionsOf(target, TOKEN)).toEqual([]);
    const ok = await post(`Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect((await sessionsOf(target, TOKEN)).map((s) => s.id)).toEqual([
      ok.headers.get("devicerail-session") as string,
    ]);
  });

  test("a JSON-RPC WebSocket upgrade is refused without the bearer token and served with it", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_TOKEN: TOKEN });
    expect((await openWs(d.port, {})).opened).toBe(false);
    expect((await openWs(d.port, { Authorization: "Bearer nope-nope-nope-nope" })).opened).toBe(false);
    const { ws, opened, next } = await openWs(d.port, { Authorization: `Bearer ${TOKEN}` });
    expect(opened).toBe(true);
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() }));
    expect((await next()).result.transport).toEqual({ kind: "webSocket", framing: "jsonMessage" });
    ws.close();
  });

  test("the Unix socket requires the token line too when a token is configured", async () => {
    const root = mkdtempSync(join(tmpdir(), "devicerail-sock-"));
    try {
      const path = join(root, "rpc.sock");
      await using _ = await ServeDaemon.start(["--socket", path], { DEVICERAIL_TOKEN: TOKEN });
      expect(await within(answerOrClose(await RpcSocket.connect({ unix: path })), 10_000, "no answer")).toBe("closed");
      expect(
        (await (await RpcSocket.connect({ unix: path }, { tokenLine: TOKEN })).hello()).result.transport.kind,
      ).toBe("unix");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("start-up fails with exit 2 and without echoing the value when the token is too short", async () => {
    const secret = "short-secret";
    await using viaEnv = new ServeDaemon(LISTEN, { DEVICERAIL_TOKEN: secret });
    await using viaFlag = new ServeDaemon([...LISTEN, "--token", secret]);
    expect([await viaEnv.exited, await viaFlag.exited]).toEqual([2, 2]);
    expect(viaEnv.stderr).toContain("invalid DEVICERAIL_TOKEN: a token must have 16 to 512 characters");
    expect(viaFlag.stderr).toContain("invalid --token: a token must have 16 to 512 characters");
    expect(viaEnv.stderr + viaFlag.stderr).not.toContain(secret);
  });

  test("--token on the command line is accepted like DEVICERAIL_TOKEN", async () => {
    await using d = await ServeDaemon.start([...LISTEN, "--token", TOKEN]);
    expect(await within(answerOrClose(await RpcSocket.connect({ port: d.port })), 10_000, "no answer")).toBe("closed");
    expect((await (await RpcSocket.connect({ port: d.port }, { tokenLine: TOKEN })).hello()).result).toBeDefined();
  });
});
