import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peerCredentials, peerCredentialsSupported } from "../../src/transports/peer-credentials.ts";

/** The descriptors of both ends of a fresh Unix-socket connection, closed by the returned function. */
async function unixPair(): Promise<{ accepted: number; connecting: number; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-peer-"));
  const fdOf = (s: unknown) => (s as { fd: number }).fd;
  const accepted = Promise.withResolvers<number>();
  const server = Bun.listen({
    unix: join(dir, "s.sock"),
    socket: { open: (s) => accepted.resolve(fdOf(s)), data() {} },
  });
  const client = await Bun.connect({ unix: join(dir, "s.sock"), socket: { data() {} } });
  return {
    accepted: await accepted.promise,
    connecting: fdOf(client),
    close: () => {
      client.end();
      server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const onPosixWithPeerCredentials = process.platform === "linux" || process.platform === "darwin";

describe("peerCredentials", () => {
  test.if(onPosixWithPeerCredentials)("is supported when the platform is Linux or macOS", () => {
    expect(peerCredentialsSupported()).toBe(true);
  });

  test.if(onPosixWithPeerCredentials)(
    "gives this process's uid, gid and pid on both ends when it connected to itself",
    async () => {
      const pair = await unixPair();
      try {
        const self = { uid: process.getuid?.() as number, gid: process.getgid?.() as number, pid: process.pid };
        expect(peerCredentials(pair.accepted)).toEqual(self);
        expect(peerCredentials(pair.connecting)).toEqual(self);
      } finally {
        pair.close();
      }
    },
  );

  test("is null and nothing throws when the descriptor is not a connected Unix socket", async () => {
    expect(peerCredentials(-1)).toBeNull();
    expect(peerCredentials(2 ** 30)).toBeNull();
    expect(peerCredentials(1.5)).toBeNull();
    const tcp = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      // A listening socket has no peer (Linux reports uid -1 for it).
      const listening = (tcp as unknown as { fd?: number }).fd;
      if (listening !== undefined) expect(peerCredentials(listening)).toBeNull();
    } finally {
      tcp.stop(true);
    }
  });
});
