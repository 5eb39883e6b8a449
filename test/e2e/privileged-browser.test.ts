/**
 * Privileged methods from a real page in headless Chromium: a page on an allowed Origin opens the
 * JSON-RPC WebSocket of a daemon without a token (the case where a page gets a control connection
 * at all) and is refused every privileged call, while its other calls work.
 */
import { expect, test } from "bun:test";
import { errorObject } from "../../src/protocol/errors.ts";
import type { Privileged } from "../../src/protocol/methods.ts";
import { browserForFile, describeWithChromium } from "../support/chromium.ts";
import { helloParams } from "../support/hello.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

declare const window: any;

const refusal = (method: string, privileged: Privileged) =>
  errorObject("method_not_permitted_on_transport", {
    arg: method,
    details: { method, transport: "webSocket", privileged, allowedTransports: ["stdio", "tcp", "unix"] },
  });

/** The page: one WebSocket to the daemon, the calls in order, every answer kept in window.outcome. */
const PAGE = `<!doctype html><title>dashboard</title><script>
(async () => {
  const q = new URLSearchParams(location.search);
  // [method, params]; a null params is left out of the request.
  const calls = JSON.parse(q.get("calls"));
  const ws = new WebSocket(q.get("rpc"));
  const answers = new Map();
  ws.onmessage = (e) => { const m = JSON.parse(e.data); answers.get(m.id)?.(m); };
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error("no WebSocket")); });
  const out = [];
  for (const [i, [method, params]] of calls.entries()) {
    const answer = new Promise((resolve) => answers.set(i + 1, resolve));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method, ...(params === null ? {} : { params }) }));
    out.push(await answer);
  }
  window.outcome = out;
})().catch((e) => { window.outcome = String(e); });
</script>`;

describeWithChromium("privileged methods from a web page", () => {
  const browser = browserForFile();

  test("a page on an allowed Origin gets method_not_permitted_on_transport for each privileged call over GET /rpc when the daemon has no token", async () => {
    const site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response(PAGE, { headers: { "Content-Type": "text/html" } }),
    });
    const origin = `http://127.0.0.1:${site.port}`;
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_ALLOWED_ORIGINS: origin });
    const context = await browser().newContext();
    try {
      const owner = await RpcSocket.connect({ port: d.port });
      await owner.hello();
      await owner.call("device.connect");
      const other = (await owner.call("session.start")).result.id as string;
      await owner.call("session.end");

      const calls: [string, unknown][] = [
        ["system.hello", helloParams()],
        ["events.clear", { sessionId: other }],
        ["sessions.list", null],
        ["devicerail.sessions.list", {}],
        ["events.list", { sessionId: other }],
        ["session.export", { sessionId: other }],
        ["devices.list", null],
        ["device.connect", null],
        ["session.start", null],
        ["device.execute", { id: crypto.randomUUID(), name: "inputSecret", arguments: { secret: "typed-by-a-page" } }],
        ["session.end", null],
      ];
      const page = await context.newPage();
      await page.goto(
        `${origin}/?${new URLSearchParams({ rpc: `ws://127.0.0.1:${d.port}/rpc`, calls: JSON.stringify(calls) })}`,
      );
      await page.waitForFunction(() => window.outcome !== undefined, null, { timeout: 15_000 });
      const outcome = await page.evaluate(() => window.outcome);
      expect(Array.isArray(outcome)).toBe(true);
      const [hello, clear, list, summaries, events, exported, devices, , started, secret, ended] = outcome as any[];
      expect(hello.result.transport).toEqual({ kind: "webSocket", framing: "jsonMessage" });
      expect([clear.error, list.error, summaries.error, events.error, exported.error, secret.error]).toEqual([
        refusal("events.clear", "always"),
        refusal("sessions.list", "always"),
        refusal("devicerail.sessions.list", "always"),
        refusal("events.list", "otherSession"),
        refusal("session.export", "otherSession"),
        refusal("device.execute", "protectedAction"),
      ]);
      expect(devices.result.devices.map((x: { id: string }) => x.id)).toEqual(["mock-1"]);
      expect(ended.result).toMatchObject({ id: started.result.id, state: "ended" });

      // The other Session is intact and the page's Session holds no trace of the secret call.
      expect((await owner.call("events.list", { sessionId: other })).result).toHaveLength(2);
      expect(
        (await owner.call("events.list", { sessionId: started.result.id })).result.map((e: any) => e.payload.type),
      ).toEqual(["sessionStarted", "sessionEnded"]);
      owner.close();
    } finally {
      await context.close();
      site.stop(true);
    }
  }, 60_000);

  test("the daemon's own report page still fetches its evidence while a page of an allowed Origin is refused it", async () => {
    const site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response("<!doctype html><title>dashboard</title>", { headers: { "Content-Type": "text/html" } }),
    });
    const origin = `http://127.0.0.1:${site.port}`;
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_ALLOWED_ORIGINS: origin });
    const context = await browser().newContext();
    const owner = await RpcSocket.connect({ port: d.port });
    try {
      await owner.hello();
      await owner.call("device.connect");
      const live = (await owner.call("session.start")).result.id as string;
      const sha = (await owner.call("device.observe")).result.screenshot.sha256 as string;
      const evidence = `http://127.0.0.1:${d.port}/evidence/${sha}`;
      const fetchFrom = async (url: string) => {
        const page = await context.newPage();
        await page.goto(url);
        const read = await page.evaluate(async (target: string) => {
          try {
            const r = await fetch(target);
            return { status: r.status, bytes: (await r.arrayBuffer()).byteLength };
          } catch (e) {
            return { error: String(e) };
          }
        }, evidence);
        await page.close();
        return read;
      };
      const report = `http://127.0.0.1:${d.port}/sessions/${live}/report`;
      const own = await fetchFrom(report);
      expect(own).toEqual({ status: 200, bytes: expect.any(Number) });
      const foreign = await fetchFrom(`${origin}/`);
      expect(foreign).toEqual({ error: expect.stringContaining("TypeError") });
      // The browser hides the answer from that page; what the daemon answers such a request is the refusal.
      const direct = await fetch(evidence, { headers: { Origin: origin } });
      expect([direct.status, ((await direct.json()) as any).error.data.code]).toEqual([
        403,
        "method_not_permitted_on_transport",
      ]);
      await owner.call("session.end");
    } finally {
      owner.close();
      await context.close();
      site.stop(true);
    }
  }, 60_000);
});
