import { describe, expect, test } from "bun:test";
import { SocketChannel } from "../../src/client/socket.ts";

describe("SocketChannel", () => {
  test("an answer whose characters are cut across chunks arrives whole", async () => {
    const text = "Grüße, 東京 🚀";
    const answer = new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text } })}\n`);
    // Cut inside the 4-byte rocket and inside a 3-byte ideograph.
    const cuts = [answer.indexOf(0xf0) + 2, answer.indexOf(0xe6) + 1].sort((a, b) => a - b);
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        async data(socket) {
          for (const [from, to] of [
            [0, cuts[0]],
            [cuts[0], cuts[1]],
            [cuts[1], answer.length],
          ] as [number, number][]) {
            socket.write(answer.subarray(from, to));
            socket.flush();
            await Bun.sleep(20);
          }
        },
      },
    });
    try {
      const conn = await SocketChannel.open({ host: "127.0.0.1", port: server.port }, null);
      const answer = await conn.send(1, "x.echo", undefined, undefined);
      expect(answer.ok && answer.result).toEqual({ text });
      await conn.close();
    } finally {
      server.stop(true);
    }
  });
});
