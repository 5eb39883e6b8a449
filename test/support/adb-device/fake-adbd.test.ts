import { describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { type FakeAdbdOptions, FakeAdbd } from "./fake-adbd.ts";
import { FakePhone } from "./fake-phone.ts";
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_WRTE,
  AUTH_RSAPUBLICKEY,
  AUTH_SIGNATURE,
  commandName,
  encodePacket,
  encodeShellPacket,
  type Packet,
  PacketReader,
  ShellId,
} from "./wire.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const HOST_BANNER = enc("host::features=shell_v2,cmd");

/** The host side of one transport, speaking raw packets; `next()` waits for the device's next packet. */
class RawHost {
  private readonly reader = new PacketReader();
  private readonly queue: Packet[] = [];
  private wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.queue.push(...this.reader.push(new Uint8Array(chunk)));
      this.wake?.();
    });
  }

  static open(port: number): Promise<RawHost> {
    return new Promise((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => resolve(new RawHost(s)));
      s.once("error", reject);
    });
  }

  send(command: number, arg0: number, arg1: number, data: Uint8Array = new Uint8Array(0)): void {
    this.socket.write(encodePacket({ command, arg0, arg1, data }));
  }

  async packet(): Promise<Packet> {
    while (this.queue.length === 0) await new Promise<void>((r) => (this.wake = r));
    return this.queue.shift() as Packet;
  }

  async next(): Promise<[string, number, number, string]> {
    const p = await this.packet();
    return [commandName(p.command), p.arg0, p.arg1, dec(p.data)];
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Runs `body` against a fresh FakeAdbd; `sent()` lists the packets the device has written so far. */
async function withAdbd(
  options: Partial<FakeAdbdOptions>,
  body: (host: RawHost, adbd: FakeAdbd, sent: () => string[]) => Promise<void>,
): Promise<void> {
  const out: string[] = [];
  const adbd = await FakeAdbd.listen({
    device: new FakePhone(),
    ...options,
    trace: (e) => void (e.direction === "out" && out.push(e.command)),
  });
  const host = await RawHost.open(adbd.port);
  try {
    await body(host, adbd, () => [...out]);
  } finally {
    host.close();
    await adbd.close();
  }
}

describe("FakeAdbd", () => {
  test("answers CNXN with its banner and the smaller maxData when auth is none", async () => {
    await withAdbd({ maxData: 65536 }, async (host) => {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      expect(await host.next()).toEqual([
        "CNXN",
        0x01000001,
        65536,
        "device::ro.product.name=fake_pixel;ro.product.model=Fake_Pixel;ro.product.device=fakepixel;features=shell_v2,cmd",
      ]);
    });
  });

  test("refuses an unknown service with CLSE(0, host id)", async () => {
    await withAdbd({}, async (host) => {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      await host.next();
      host.send(A_OPEN, 7, 0, enc("jdwp:1\0"));
      expect(await host.next()).toEqual(["CLSE", 0, 7, ""]);
    });
  });

  test("runs shell,v2 and waits for each OKAY before the next WRTE", async () => {
    await withAdbd({}, async (host, _adbd, sent) => {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      await host.next();
      host.send(A_OPEN, 8, 0, enc("shell,v2,raw:echo hi\0"));
      expect(await host.next()).toEqual(["OKAY", 1, 8, ""]);
      expect(await host.next()).toEqual(["WRTE", 1, 8, dec(encodeShellPacket(ShellId.stdout, enc("hi\n")))]);
      host.send(A_WRTE, 8, 1, encodeShellPacket(ShellId.closeStdin));
      expect(await host.next()).toEqual(["OKAY", 1, 8, ""]);
      expect(sent()).toEqual(["CNXN", "OKAY", "WRTE", "OKAY"]);
      host.send(A_OKAY, 8, 1);
      expect(await host.next()).toEqual(["WRTE", 1, 8, "\u0003\u0001\u0000\u0000\u0000\u0000"]);
      host.send(A_OKAY, 8, 1);
      expect(await host.next()).toEqual(["CLSE", 1, 8, ""]);
    });
  });

  test("keeps sending tokens and never CNXN when auth is never", async () => {
    let opened!: () => void;
    const seenOpen = new Promise<void>((r) => (opened = r));
    const out: string[] = [];
    const adbd = await FakeAdbd.listen({
      device: new FakePhone(),
      auth: "never",
      trace: (e) => (e.direction === "out" ? out.push(e.command) : e.command === "OPEN" && opened()),
    });
    const host = await RawHost.open(adbd.port);
    try {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      const token = await host.packet();
      expect([commandName(token.command), token.arg0, token.data.length]).toEqual(["AUTH", 1, 20]);
      host.send(A_AUTH, AUTH_SIGNATURE, 0, new Uint8Array(256));
      expect((await host.next()).slice(0, 2)).toEqual(["AUTH", 1]);
      host.send(A_AUTH, AUTH_RSAPUBLICKEY, 0, enc("QAAAA key user@host\0"));
      host.send(A_OPEN, 9, 0, enc("shell:echo\0"));
      await seenOpen;
      expect(out).toEqual(["AUTH", "AUTH"]);
    } finally {
      host.close();
      await adbd.close();
    }
  });

  test("announce re-sends CNXN with the new system type", async () => {
    await withAdbd({}, async (host, adbd) => {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      await host.next();
      adbd.announce("bootloader");
      expect((await host.next())[3].split("::")[0]).toBe("bootloader");
    });
  });

  test("close drops the connection without a CLSE", async () => {
    const adbd = await FakeAdbd.listen({ device: new FakePhone() });
    const socket = connect(adbd.port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    const closed = new Promise((r) => socket.once("close", r));
    const data: Buffer[] = [];
    socket.on("data", (d: Buffer) => data.push(d));
    await adbd.close();
    await closed;
    expect([adbd.closed, Buffer.concat(data).length]).toEqual([true, 0]);
  });

  test("ignores CLSE when the stream is unknown", async () => {
    await withAdbd({}, async (host) => {
      host.send(A_CNXN, 0x01000001, 1 << 20, HOST_BANNER);
      await host.next();
      host.send(A_CLSE, 3, 99);
      host.send(A_OPEN, 4, 0, enc("nope:\0"));
      expect(await host.next()).toEqual(["CLSE", 0, 4, ""]);
    });
  });
});
