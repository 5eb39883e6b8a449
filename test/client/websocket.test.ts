import { describe, expect, test } from "bun:test";
import { RemoteError } from "../../src/client/remote-error.ts";
import { type Notification, openEventClient } from "../../src/client/websocket.ts";
import { errorObject } from "../../src/protocol/errors.ts";

/** A WebSocket server that answers each request by id, after a notification, and refuses events.subscribe. */
function server() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, s) =>
      s.upgrade(req, { headers: { "Sec-WebSocket-Protocol": "devicerail.events.v1" } })
        ? undefined
        : new Response(null, { status: 400 }),
    websocket: {
      message(ws, text) {
        const req = JSON.parse(String(text)) as { id: number; method: string };
        ws.send(JSON.stringify({ jsonrpc: "2.0", method: "events.stream.event", params: { about: req.id } }));
        if (req.method === "events.subscribe")
          ws.send(
            JSON.stringify({ jsonrpc: "2.0", id: req.id, error: errorObject("session_not_found", { details: {} }) }),
          );
        else ws.send(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { method: req.method } }));
      },
    },
  });
}

describe("the event plane's WebSocket wiring", () => {
  test("answers are matched by id, notifications go to the listener, an error answer is a RemoteError", async () => {
    const s = server();
    const seen: Notification[] = [];
    try {
      const { client, channel } = await openEventClient(`ws://127.0.0.1:${s.port}/`, ["devicerail.events.v1"], (n) =>
        seen.push(n),
      );
      const hello = client.call("system.hello", {
        client: { name: "t", version: "1" },
        protocol: { ranges: [{ major: 1, minMinor: 5, maxMinor: 5 }] },
        features: { required: [], optional: [] },
      });
      const sub = client
        .call("events.subscribe", { sessionId: "00000000-0000-4000-8000-000000000000" })
        .catch((e: unknown) => e);
      expect(await hello).toEqual({ method: "system.hello" } as never);
      const refused = await sub;
      expect(refused).toBeInstanceOf(RemoteError);
      expect((refused as RemoteError).data.code).toBe("session_not_found");
      expect(seen).toEqual([
        { method: "events.stream.event", params: { about: 1 } },
        { method: "events.stream.event", params: { about: 2 } },
      ]);
      await client.close();
      await channel.closed;
    } finally {
      await s.stop(true);
    }
  });
});
