/**
 * A stand-in for an adb server of another version than the adb under test, on its own loopback
 * port: the one a user's own adb started. It answers the host services devicerail asks
 * (`host:version` with its version in hex, as adb's server does; `host:devices` and
 * `host:track-devices` with no devices) and records every request, `host:kill` included: an adb
 * client of a different version sends that before starting its own server ("adb server version
 * (40) doesn't match this client (41); killing...", the real adb's stderr). A test proves
 * devicerail never asks for it.
 */
import { createServer, type Server, type Socket } from "node:net";

const frame = (body: string) => `OKAY${body.length.toString(16).padStart(4, "0")}${body}`;

export class OtherVersionServer implements AsyncDisposable {
  /** Every host service asked for, in order. */
  readonly requests: string[] = [];
  /** The next N `host:version` requests get the connection closed without an answer (a busy or restarting server). */
  unanswered = 0;
  private readonly trackers = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    /** The adb protocol version it reports, e.g. 40 (platform-tools 30/31 speak 41). */
    readonly version: number,
  ) {}

  static start(version: number): Promise<OtherVersionServer> {
    return new Promise((resolve, reject) => {
      let self: OtherVersionServer;
      const server = createServer((socket) => self.serve(socket));
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const a = server.address();
        self = new OtherVersionServer(server, a && typeof a === "object" ? a.port : 0, version);
        resolve(self);
      });
    });
  }

  /** Whether it was asked to kill itself. */
  get killed(): boolean {
    return this.requests.includes("host:kill");
  }

  /** Ends every host:track-devices connection, as a server does when it exits or restarts. */
  dropTrackers(): void {
    for (const s of this.trackers) s.destroy();
    this.trackers.clear();
  }

  private serve(socket: Socket): void {
    let buf = Buffer.alloc(0);
    socket.on("error", () => {});
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      const len = Number.parseInt(buf.subarray(0, 4).toString(), 16);
      if (buf.length < 4 + len) return;
      socket.off("data", onData);
      const service = buf.subarray(4, 4 + len).toString();
      this.requests.push(service);
      if (service === "host:version") {
        if (this.unanswered > 0) {
          this.unanswered--;
          socket.destroy();
        } else socket.end(frame(this.version.toString(16).padStart(4, "0")));
      } else if (service === "host:devices" || service === "host:devices-l") socket.end(frame(""));
      else if (service === "host:track-devices") {
        this.trackers.add(socket);
        socket.once("close", () => this.trackers.delete(socket));
        socket.write(frame(""));
      } else if (service === "host:kill") {
        // Recorded and acknowledged, but the port stays bound: the adb that asked then fails to
        // start its own server here instead of leaving one running after the test.
        socket.end("OKAY");
        this.dropTrackers();
      } else {
        const why = "unknown host service";
        socket.end(`FAIL${why.length.toString(16).padStart(4, "0")}${why}`);
      }
    };
    socket.on("data", onData);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.dropTrackers();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
