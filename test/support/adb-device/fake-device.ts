/**
 * The fixture API: a FakePhone behind a FakeAdbd on an ephemeral port, attached to a private adb
 * server with `adb connect`, ready once the server lists it in the expected state.
 */
import type { AdbServer } from "./adb-server.ts";
import { type AuthMode, FakeAdbd, type FakeAdbdOptions, type SystemType } from "./fake-adbd.ts";
import { FakePhone, type FakePhoneOptions } from "./fake-phone.ts";

export interface FakeDeviceOptions extends FakePhoneOptions {
  /** Use this phone instead of building one from the FakePhoneOptions. */
  phone?: FakePhone;
  features?: readonly string[];
  auth?: AuthMode;
  maxData?: number;
  systemType?: SystemType;
  banner?: Record<string, string>;
  trace?: FakeAdbdOptions["trace"];
  /** For connecting and for each state wait. Default 10 s. */
  timeoutMs?: number;
}

export interface FakeDevice extends AsyncDisposable {
  /** `127.0.0.1:<port>`, as the adb server names TCP devices. */
  readonly serial: string;
  readonly port: number;
  readonly phone: FakePhone;
  readonly adbd: FakeAdbd;
  /** The state `adb devices` should show while attached: `device`, or `unauthorized` with auth `never`. */
  readonly expectedState: string;
  /** `adb connect` again (after a server restart, or a disconnect) and wait for the expected state. */
  connect(): Promise<void>;
  /** Closes the socket and runs `adb disconnect`, so trackers see the removal at once. */
  unplug(): Promise<void>;
  /**
   * Closes the socket only. `adb devices` shows `offline` within milliseconds, but
   * host:track-devices reports nothing for about 60 s (adb 29.0.6 waits to reconnect).
   */
  vanish(): Promise<void>;
}

export async function startFakeDevice(server: AdbServer, options: FakeDeviceOptions = {}): Promise<FakeDevice> {
  const phone = options.phone ?? new FakePhone(options);
  const adbd = await FakeAdbd.listen({
    device: phone,
    ...(options.features ? { features: options.features } : {}),
    ...(options.auth ? { auth: options.auth } : {}),
    ...(options.maxData ? { maxData: options.maxData } : {}),
    ...(options.systemType ? { systemType: options.systemType } : {}),
    ...(options.banner ? { banner: options.banner } : {}),
    ...(options.trace ? { trace: options.trace } : {}),
  });
  const serial = `127.0.0.1:${adbd.port}`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const expectedState = options.auth === "never" ? "unauthorized" : (options.systemType ?? "device");
  let disconnected = false;

  const disconnect = async () => {
    if (disconnected || !server.running) return;
    disconnected = true;
    await server.adb(["disconnect", serial], { timeoutMs });
    await server.waitForState(serial, null, { timeoutMs });
  };

  const device: FakeDevice = {
    serial,
    port: adbd.port,
    phone,
    adbd,
    expectedState,
    async connect() {
      // The output is not parsed: with auth it says "failed to authenticate" even when the device comes online.
      const r = await server.adb(["connect", serial], { timeoutMs });
      try {
        await server.waitForState(serial, expectedState, { timeoutMs });
      } catch (e) {
        throw new Error(
          `${serial} never became ${expectedState} (adb connect said: ${r.stdout.trim()} ${r.stderr.trim()}): ${e}`,
        );
      }
      disconnected = false;
    },
    async unplug() {
      await adbd.close();
      await disconnect();
    },
    async vanish() {
      await adbd.close();
    },
    async [Symbol.asyncDispose]() {
      await adbd.close();
      // Commands that outlived their stream (legacy shell, as on a phone) end with the phone.
      phone.processes.killAll();
      // Always disconnect: a stale transport would re-attach to a later fake on the same port.
      await disconnect().catch(() => undefined);
    },
  };
  try {
    await device.connect();
  } catch (e) {
    await device[Symbol.asyncDispose]();
    throw e;
  }
  return device;
}
