import { describe, expect, test } from "bun:test";
import { setTcpUserTimeout, tcpUserTimeout } from "../../src/transports/tcp-user-timeout.ts";

/** The descriptor of the accepted end of a fresh loopback connection, closed by the returned function. */
async function acceptedFd(): Promise<{ fd: number; close(): void }> {
  let resolveFd: (fd: number) => void = () => {};
  const fd = new Promise<number>((r) => (resolveFd = r));
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { open: (s) => resolveFd((s as unknown as { fd: number }).fd), data() {} },
  });
  const client = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
  return {
    fd: await fd,
    close: () => {
      client.end();
      server.stop(true);
    },
  };
}

describe("TCP_USER_TIMEOUT", () => {
  test.if(process.platform === "linux")(
    "is set on a socket's descriptor and read back as set; a fresh socket has none",
    async () => {
      const conn = await acceptedFd();
      try {
        expect(tcpUserTimeout(conn.fd)).toBe(0);
        expect(setTcpUserTimeout(conn.fd, 21_000)).toBe(true);
        expect(tcpUserTimeout(conn.fd)).toBe(21_000);
      } finally {
        conn.close();
      }
    },
  );

  test("a descriptor that is not a socket is refused, and nothing throws", () => {
    expect(setTcpUserTimeout(-1, 1_000)).toBe(false);
    expect(setTcpUserTimeout(2 ** 30, 1_000)).toBe(false);
  });
});
