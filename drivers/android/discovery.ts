import type { CallContext, DeviceChange } from "../../src/driver/driver.ts";
import type { DeviceInfo } from "../../src/protocol/types/device.ts";
import type { Logger } from "../../src/driver/driver.ts";
import { pause } from "../../src/driver/pause.ts";
import type { AdbEntry, AdbkitPort } from "./adbkit-port.ts";
import { deviceName } from "./parse/devices.ts";

export const ID_PREFIX = "android-adb:";
export const idOf = (serial: string) => `${ID_PREFIX}${serial}`;
/** How long to wait before asking for the server again after it went away. */
const RECOVERY_MS = [250, 500, 1000, 2000, 4000];

export interface Known {
  serial: string;
  state: string;
  info: DeviceInfo;
  props: Record<string, string> | null;
}

/**
 * Follows the adb server's device list: present / state changes / gone, with names from the
 * devices' properties. When the server goes away (killed, restarted) it starts one again and
 * reconciles, so hot-plug keeps working without restarting the daemon.
 */
export class Discovery {
  readonly devices = new Map<string, Known>();
  private tracker: { stop(): void } | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  private recovering: Promise<void> | null = null;
  /** Bumped on every removal, so a property read that outlives its device does not re-add it. */
  private readonly removals = new Map<string, number>();

  constructor(
    private readonly port: AdbkitPort,
    private readonly emit: (c: DeviceChange) => void,
    private readonly log: Logger,
  ) {}

  private ctx(ms: number): CallContext {
    return { signal: this.stopping.signal, deadline: Date.now() + ms, log: this.log };
  }

  /** Connects to (or starts) the server, lists its devices and follows changes. Throws when no server can be reached. */
  async start(): Promise<void> {
    await this.ensureServer();
    await this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort("stop");
    this.tracker?.stop();
    this.tracker = null;
    await this.recovering?.catch(() => {});
  }

  /**
   * Uses the server that answers, whatever its version (adbkit speaks to any over the socket), and
   * starts one only when none answers, in a way that cannot replace one that came up meanwhile.
   * devicerail never kills or restarts a server: a user's adb of another version would kill
   * ours in turn, and each would keep replacing the other's.
   */
  private async ensureServer(): Promise<void> {
    let version: number;
    try {
      version = await this.port.version(this.ctx(5_000));
    } catch {
      this.log.info({ port: this.port.opts.port }, "no adb server answered; starting one");
      try {
        await this.port.startServer(this.ctx(15_000));
      } catch (startErr) {
        // Another adb may have bound the port since: use its server if it answers now.
        version = await this.port.version(this.ctx(5_000)).catch(() => {
          throw startErr;
        });
        await this.noteVersion(version);
        return;
      }
      version = await this.port.version(this.ctx(5_000));
    }
    await this.noteVersion(version);
  }

  private clientVersion: Promise<number | null> | null = null;
  private readonly versionsNoted = new Set<number>();

  /** Says once per server version when the server is not of the adb devicerail was given. */
  private async noteVersion(server: number): Promise<void> {
    if (this.versionsNoted.has(server)) return;
    this.versionsNoted.add(server);
    this.clientVersion ??= this.port.clientVersion(this.ctx(5_000));
    const client = await this.clientVersion;
    if (client === null || client === server) return;
    this.log.warn(
      { port: this.port.opts.port, serverVersion: server, clientVersion: client, adb: this.port.opts.bin },
      `the adb server on port ${this.port.opts.port} is version ${server} but ${this.port.opts.bin} is version ${client}: devicerail uses that server as it is and never restarts it. ` +
        "adb clients of another version than the server kill it and start their own, so use one adb for everything: " +
        "the one that started this server, or set DEVICERAIL_ADB_PATH to the adb you run yourself (devicerail doctor shows both)",
    );
  }

  private async follow(): Promise<void> {
    // Track first, then list: a change between the two is seen twice rather than missed.
    this.tracker = await this.port.track(
      {
        onState: (e) => void this.update(e),
        onRemove: (serial) => this.remove(serial),
        onEnd: (err) => this.lost(err),
      },
      this.ctx(5_000),
    );
    const listed = await this.port.listDevices(this.ctx(5_000));
    const present = new Set(listed.map((e) => e.serial));
    for (const serial of [...this.devices.keys()]) if (!present.has(serial)) this.remove(serial);
    await Promise.all(listed.map((e) => this.update(e)));
  }

  private async update(e: AdbEntry): Promise<void> {
    if (this.stopped) return;
    const known = this.devices.get(e.serial);
    const removals = this.removals.get(e.serial) ?? 0;
    let props = known?.props ?? null;
    if (e.state === "device" && !props) {
      try {
        props = await this.port.properties(e.serial, this.ctx(5_000));
      } catch (err) {
        this.log.warn({ serial: e.serial, err: String(err) }, "could not read device properties");
      }
    }
    if (this.stopped || (this.removals.get(e.serial) ?? 0) !== removals) return;
    const base = props ? deviceName(props, e.serial) : `Android (${e.serial})`;
    const info: DeviceInfo = {
      id: idOf(e.serial),
      name: e.state === "device" ? base : `${base} (${e.state})`,
      platform: { kind: "android" },
      // Known from the properties read at discovery, so lists (and the farm's OS ranges) have it before a connect.
      osVersion: known?.info.osVersion ?? (props?.["ro.build.version.release"] || null),
      connected: (known?.info.connected ?? false) && e.state === "device",
    };
    this.devices.set(e.serial, { serial: e.serial, state: e.state, info, props });
    this.emit({ type: "present", device: info });
  }

  private remove(serial: string): void {
    this.removals.set(serial, (this.removals.get(serial) ?? 0) + 1);
    if (!this.devices.delete(serial)) return;
    this.emit({ type: "gone", deviceId: idOf(serial) });
  }

  private lost(err: unknown): void {
    this.tracker = null;
    if (this.stopped || this.recovering) return;
    this.log.warn({ err: err ? String(err) : null }, "lost the adb server; recovering");
    this.recovering = this.recover().finally(() => {
      this.recovering = null;
    });
  }

  private async recover(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await pause(RECOVERY_MS[Math.min(attempt, RECOVERY_MS.length - 1)] as number, this.stopping);
      } catch {
        return; // stop() ended the wait
      }
      try {
        await this.ensureServer();
        await this.follow();
        this.log.info({ attempt }, "adb server recovered");
        return;
      } catch (err) {
        this.log.warn({ attempt, err: String(err) }, "adb server still unreachable");
      }
    }
  }

  /** Marks the device connected or not, keeping the rest of what discovery knows. */
  setConnected(serial: string, connected: boolean, osVersion?: string | null): DeviceInfo | null {
    const k = this.devices.get(serial);
    if (!k) return null;
    k.info = { ...k.info, connected, ...(osVersion !== undefined ? { osVersion } : {}) };
    return k.info;
  }
}
