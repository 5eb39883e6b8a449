/**
 * A simulated adbd on 127.0.0.1: the TCP side of `adb connect`. It answers the host's CNXN (with or
 * without an AUTH exchange), keeps a stream table with one WRTE in flight per stream, and routes
 * OPENs to the shell, exec and sync services of an AdbdDevice (normally a FakePhone).
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { type AdbdDevice, routeService } from "./adbd-services.ts";
import { AdbdStream, type StreamLink } from "./adbd-stream.ts";
import { text } from "./command-io.ts";
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_VERSION_SKIP_CHECKSUM,
  A_WRTE,
  AUTH_RSAPUBLICKEY,
  AUTH_SIGNATURE,
  AUTH_TOKEN,
  commandName,
  encodePacket,
  MAX_PAYLOAD,
  MAX_PAYLOAD_V1,
  type Packet,
  PacketReader,
} from "./wire.ts";

/**
 * `none`: answer CNXN with CNXN (no key needed). `accept-any-signature`: one AUTH round trip.
 * `accept-pubkey`: accept once the host offers its public key (the user tapped "Allow"; `adb
 * connect` still prints "failed to authenticate"). `never`: the device stays `unauthorized`.
 */
export type AuthMode = "none" | "accept-any-signature" | "accept-pubkey" | "never";
export type SystemType = "device" | "recovery" | "bootloader" | "sideload" | "rescue";

export interface TraceEntry {
  direction: "in" | "out";
  command: string;
  arg0: number;
  arg1: number;
  data: Uint8Array;
}

export interface FakeAdbdOptions {
  device: AdbdDevice;
  /** adb features in the banner. Default `shell_v2,cmd`; without shell_v2 exit codes are lost. */
  features?: readonly string[];
  auth?: AuthMode;
  /** Largest payload the device accepts and sends; the host's 1 MiB caps it. Default 1 MiB, as real adbd. */
  maxData?: number;
  systemType?: SystemType;
  /** Banner properties added to (or replacing) the device's ro.product.* values. */
  banner?: Record<string, string>;
  /** Sees every packet in both directions. */
  trace?: (entry: TraceEntry) => void;
}

export const DEFAULT_FEATURES: readonly string[] = ["shell_v2", "cmd"];

export class FakeAdbd {
  private readonly connections = new Set<AdbdConnection>();
  private systemType: SystemType;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly options: FakeAdbdOptions,
  ) {
    this.systemType = options.systemType ?? "device";
    server.on("connection", (socket) => {
      if (this.closing) return void socket.destroy();
      const c = new AdbdConnection(socket, this);
      this.connections.add(c);
      socket.on("close", () => this.connections.delete(c));
    });
  }

  /** Listens on 127.0.0.1, port 0 unless given (an odd port in 5555–5585 would be auto-registered as an emulator). */
  static listen(options: FakeAdbdOptions, port = 0): Promise<FakeAdbd> {
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const address = server.address();
        if (!address || typeof address === "string") return reject(new Error("fake adbd: no TCP address"));
        resolve(new FakeAdbd(server, address.port, options));
      });
    });
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  /** Live host connections (normally one per adb server that connected). */
  get connectionCount(): number {
    return this.connections.size;
  }

  banner(): string {
    const props = { ...this.options.device.bannerProps(), ...this.options.banner };
    const fields = Object.entries(props).map(([k, v]) => `${k}=${v}`);
    fields.push(`features=${(this.options.features ?? DEFAULT_FEATURES).join(",")}`);
    return `${this.systemType}::${fields.join(";")}`;
  }

  /** Re-sends CNXN on every online connection; the only prompt way to change the state trackers see. */
  announce(systemType: SystemType = this.systemType): void {
    this.systemType = systemType;
    for (const c of this.connections) c.announce();
  }

  /** Stops listening and drops every connection abruptly (no CLSE), like a cable pulled out. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const c of this.connections) c.destroy();
      this.server.close(() => resolve());
    });
    return this.closing;
  }
}

type ConnectionState = "cnxn" | "auth" | "online";

class AdbdConnection implements StreamLink {
  private readonly reader = new PacketReader(MAX_PAYLOAD);
  private readonly streams = new Map<number, AdbdStream>();
  private state: ConnectionState = "cnxn";
  private version = A_VERSION_SKIP_CHECKSUM;
  private nextId = 1;
  maxData = MAX_PAYLOAD_V1;

  constructor(
    private readonly socket: Socket,
    private readonly adbd: FakeAdbd,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      let packets: Packet[];
      try {
        packets = this.reader.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      } catch {
        return this.destroy();
      }
      for (const p of packets) this.handle(p);
    });
    socket.on("error", () => this.destroy());
    socket.on("close", () => this.closeStreams());
  }

  send(command: number, arg0: number, arg1: number, data: Uint8Array = new Uint8Array(0)): void {
    if (this.socket.destroyed) return;
    this.adbd.options.trace?.({ direction: "out", command: commandName(command), arg0, arg1, data });
    // Checksums may be left out only once A_VERSION_SKIP_CHECKSUM has been negotiated.
    this.socket.write(
      encodePacket({ command, arg0, arg1, data }, this.state !== "online" || this.version < A_VERSION_SKIP_CHECKSUM),
    );
  }

  announce(): void {
    if (this.state === "online") this.sendCnxn();
  }

  destroy(): void {
    this.socket.destroy();
    this.closeStreams();
  }

  private closeStreams(): void {
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const s of streams) s.handleClose();
  }

  private sendCnxn(): void {
    const own = this.adbd.options.maxData ?? MAX_PAYLOAD;
    this.send(A_CNXN, A_VERSION_SKIP_CHECKSUM, own, new TextEncoder().encode(this.adbd.banner()));
    this.state = "online";
  }

  private sendToken(): void {
    this.send(A_AUTH, AUTH_TOKEN, 0, new Uint8Array(randomBytes(20)));
  }

  private handle(p: Packet): void {
    this.adbd.options.trace?.({
      direction: "in",
      command: commandName(p.command),
      arg0: p.arg0,
      arg1: p.arg1,
      data: p.data,
    });
    const auth = this.adbd.options.auth ?? "none";
    if (p.command === A_CNXN) {
      this.version = Math.min(p.arg0, A_VERSION_SKIP_CHECKSUM);
      this.maxData = Math.min(p.arg1, this.adbd.options.maxData ?? MAX_PAYLOAD);
      if (auth === "none") return this.sendCnxn();
      this.state = "auth";
      return this.sendToken();
    }
    if (p.command === A_AUTH) {
      if (this.state !== "auth") return;
      // A refused signature gets a fresh token: the host tries its next key, then offers its public key.
      if (p.arg0 === AUTH_SIGNATURE) return auth === "accept-any-signature" ? this.sendCnxn() : this.sendToken();
      if (p.arg0 === AUTH_RSAPUBLICKEY && auth === "accept-pubkey") this.sendCnxn();
      return;
    }
    if (this.state !== "online") return;
    if (p.command === A_OPEN) return this.open(p);
    // Packets for streams already gone are ignored, as the host ignores ours.
    const stream = this.streams.get(p.arg1);
    if (!stream) return;
    if (p.command === A_OKAY) stream.handleOkay();
    else if (p.command === A_WRTE) {
      this.send(A_OKAY, stream.localId, stream.remoteId);
      stream.onData(p.data);
    } else if (p.command === A_CLSE) {
      this.streams.delete(p.arg1);
      stream.handleClose();
    }
  }

  private open(p: Packet): void {
    let service = text(p.data);
    if (service.endsWith("\0")) service = service.slice(0, -1);
    const stream = new AdbdStream(this, this.nextId++, p.arg0, service);
    const start = routeService(service, stream, this.adbd.options.device, () => void this.adbd.close());
    if (!start) return this.send(A_CLSE, 0, p.arg0);
    this.streams.set(stream.localId, stream);
    this.send(A_OKAY, stream.localId, stream.remoteId);
    start();
  }
}
