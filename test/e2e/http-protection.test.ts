import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { helloParams } from "../support/daemon.ts";
import { RpcSocket, ServeDaemon, rawExchange, statusOf } from "./serve-daemon.ts";

const MiB = 1_048_576;
let d: ServeDaemon;
/** A long-lived NDJSON client that checks after every case that no Session was created. */
let watcher: RpcSocket;

beforeAll(async () => {
  d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_ALLOWED_ORIGINS: "http://localhost:5173" });
  watcher = await RpcSocket.connect({ port: d.port });
  await watcher.hello();
});
afterAll(async () => {
  watcher.close();
  await d[Symbol.asyncDispose]();
});

const sessionCount = async () => ((await watcher.call("sessions.list")).result as unknown[]).length;

/** A raw request to the device route that would start a Session if its handler ran. */
function raw(lines: string[], body = ""): string {
  return `${lines.join("\r\n")}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
const host = () => `Host: 127.0.0.1:${d.port}`;
const TAP = "POST /devices/_/actions/tap HTTP/1.1";
const SHOT = "GET /devices/_/screenshot.png HTTP/1.1";
const JSON_TYPE = "Content-Type: application/json";
const tapBody = '{"x":1,"y":1}';

type Case = { name: string; status: number; reason: string; request: () => string };
const CASES: Case[] = [
  {
    name: "a foreign Host",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([TAP, `Host: evil.test:${d.port}`, JSON_TYPE], tapBody),
  },
  {
    name: "a Host without the port",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, "Host: 127.0.0.1"]),
  },
  {
    name: "a Host with another port",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, "Host: 127.0.0.1:1"]),
  },
  {
    name: "a DNS-rebinding name that resolves to loopback",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, `Host: localhost.evil.test:${d.port}`]),
  },
  {
    name: "a Host with a trailing dot",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, `Host: localhost.:${d.port}`]),
  },
  {
    name: "a Host in upper case",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, `Host: LOCALHOST:${d.port}`]),
  },
  {
    name: "two Host headers",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([SHOT, host(), "Host: evil.test"]),
  },
  {
    name: "no Host (HTTP/1.0)",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw(["GET /devices/_/screenshot.png HTTP/1.0"]),
  },
  {
    name: "an absolute-form target naming another host",
    status: 403,
    reason: "hostNotAllowed",
    request: () => raw([`GET http://127.0.0.1:${d.port}/devices/_/screenshot.png HTTP/1.1`, "Host: evil.test"]),
  },
  {
    name: "a foreign Origin",
    status: 403,
    reason: "originNotAllowed",
    request: () => raw([TAP, host(), JSON_TYPE, "Origin: https://evil.example"], tapBody),
  },
  {
    name: "Origin: null (a sandboxed frame or file:)",
    status: 403,
    reason: "originNotAllowed",
    request: () => raw([TAP, host(), JSON_TYPE, "Origin: null"], tapBody),
  },
  {
    name: "the daemon's own origin, which is not on the list",
    status: 403,
    reason: "originNotAllowed",
    request: () => raw([SHOT, host(), `Origin: http://127.0.0.1:${d.port}`]),
  },
  {
    name: "two Origin headers, one allowed",
    status: 403,
    reason: "originNotAllowed",
    request: () => raw([SHOT, host(), "Origin: http://localhost:5173", "Origin: https://evil.example"]),
  },
  {
    name: "a cross-site GET without Origin (an <img> tag)",
    status: 403,
    reason: "crossSiteRequest",
    request: () => raw([SHOT, host(), "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors"]),
  },
  {
    name: "a text/plain POST",
    status: 415,
    reason: "unsupportedMediaType",
    request: () => raw([TAP, host(), "Content-Type: text/plain"], tapBody),
  },
  {
    name: "a form-encoded POST",
    status: 415,
    reason: "unsupportedMediaType",
    request: () => raw([TAP, host(), "Content-Type: application/x-www-form-urlencoded"], "x=1&y=1"),
  },
  {
    name: "a multipart POST",
    status: 415,
    reason: "unsupportedMediaType",
    request: () => raw([TAP, host(), "Content-Type: multipart/form-data; boundary=b"], "--b--"),
  },
  {
    name: "a POST without a content type",
    status: 415,
    reason: "unsupportedMediaType",
    request: () => raw([TAP, host()], tapBody),
  },
  {
    name: "a JSON body over 1 MiB",
    status: 413,
    reason: "bodyTooLarge",
    request: () => raw([TAP, host(), JSON_TYPE], `{"x":1,"y":1,"pad":"${"p".repeat(MiB)}"}`),
  },
];

describe("browser protection on the HTTP side of the TCP port", () => {
  for (const c of CASES)
    test(`${c.name} is refused with ${c.status} and no handler runs`, async () => {
      const response = await rawExchange(d.port, c.request());
      expect(statusOf(response)).toBe(c.status);
      const body = response.slice(response.indexOf("\r\n\r\n") + 4);
      expect(JSON.parse(body).error.data.details.reason).toBe(c.reason);
      // No CORS grant that would let a page read the refusal either.
      expect(response.toLowerCase()).not.toContain("access-control-allow");
      expect(await sessionCount()).toBe(0);
    });

  test("a chunked JSON body over 1 MiB is refused with 413 and no handler runs", async () => {
    const chunk = `{"x":1,"pad":"${"p".repeat(MiB)}"}`;
    const request = `${TAP}\r\n${host()}\r\n${JSON_TYPE}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n0\r\n\r\n`;
    const response = await rawExchange(d.port, request);
    expect(statusOf(response)).toBe(413);
    expect(JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4)).error.data.details).toEqual({
      reason: "bodyTooLarge",
      limitBytes: MiB,
    });
    expect(await sessionCount()).toBe(0);
  });

  test("an HTTP POST whose body holds NDJSON JSON-RPC lines gets an HTTP answer and is never dispatched as JSON-RPC", async () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "system.hello", params: helloParams() },
      { jsonrpc: "2.0", id: 2, method: "device.connect" },
      { jsonrpc: "2.0", id: 3, method: "session.start" },
    ];
    const body = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
    // What a browser form (enctype text/plain) or a no-cors fetch would send to the port.
    for (const request of [
      raw(["POST / HTTP/1.1", host(), "Content-Type: text/plain", "Origin: https://evil.example"], body),
      raw(["POST / HTTP/1.1", host(), "Content-Type: text/plain"], body),
      raw(["POST / HTTP/1.1", host(), JSON_TYPE], body),
    ]) {
      const response = await rawExchange(d.port, request);
      expect(response).toStartWith("HTTP/1.1 ");
      expect([403, 415, 404]).toContain(statusOf(response));
      expect(response).not.toContain('"jsonrpc"');
    }
    expect(await sessionCount()).toBe(0);
  });

  test("a JSON-RPC WebSocket upgrade with a foreign Origin is refused with 403", async () => {
    const key = btoa("0123456789abcdef");
    const response = await rawExchange(
      d.port,
      raw([
        "GET /rpc HTTP/1.1",
        host(),
        "Upgrade: websocket",
        "Connection: Upgrade",
        `Sec-WebSocket-Key: ${key}`,
        "Sec-WebSocket-Version: 13",
        "Origin: https://evil.example",
      ]),
    );
    expect(statusOf(response)).toBe(403);
    const ws = new WebSocket(`ws://127.0.0.1:${d.port}/rpc`, { headers: { Origin: "https://evil.example" } } as never);
    expect(
      await new Promise((resolve) => ((ws.onopen = () => resolve("open")), (ws.onerror = () => resolve("refused")))),
    ).toBe("refused");
  });

  test("the same requests are served when Host, Origin and content type are right", async () => {
    for (const hostHeader of [`127.0.0.1:${d.port}`, `localhost:${d.port}`, `[::1]:${d.port}`]) {
      const response = await rawExchange(
        d.port,
        raw(
          [
            TAP,
            `Host: ${hostHeader}`,
            "Content-Type: application/json; charset=utf-8",
            "Origin: http://localhost:5173",
            "Sec-Fetch-Site: same-site",
          ],
          tapBody,
        ),
      );
      expect(statusOf(response)).toBe(200);
    }
    expect(await sessionCount()).toBe(3);
  });

  test("the daemon logged no error while serving these requests", () => {
    expect(d.stderr).not.toContain('"level":50');
  });
});
