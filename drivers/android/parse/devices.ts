/** adb device states (`adb devices` second column) and the name a device is listed under. */

export type AdbState =
  | "device"
  | "offline"
  | "unauthorized"
  | "authorizing"
  | "no permissions"
  | "recovery"
  | "sideload"
  | "bootloader"
  | "host"
  | "connecting"
  | "unknown";

const KNOWN: ReadonlySet<string> = new Set<AdbState>([
  "device",
  "offline",
  "unauthorized",
  "authorizing",
  "no permissions",
  "recovery",
  "sideload",
  "bootloader",
  "host",
  "connecting",
]);

/** adb appends a reason to "no permissions" (`no permissions (user in plugdev group; …)`). */
export function toAdbState(state: string): AdbState {
  const s = state.trim();
  if (s.startsWith("no permissions")) return "no permissions";
  return KNOWN.has(s) ? (s as AdbState) : "unknown";
}

export interface StateProblem {
  platformCode: string;
  retryable: boolean;
  hint: string;
}

/** Why a listed device cannot be used yet, as the platform error `connect` raises; null when it can. */
export function stateProblem(state: string): StateProblem | null {
  const s = toAdbState(state);
  switch (s) {
    case "device":
      return null;
    case "unauthorized":
      return {
        platformCode: "android_device_unauthorized",
        retryable: true,
        hint: "accept the USB debugging prompt on the phone (and tick 'Always allow'), then try again",
      };
    case "offline":
      return {
        platformCode: "android_device_offline",
        retryable: true,
        hint: "reconnect the cable or run `adb reconnect offline`",
      };
    case "no permissions":
      return {
        platformCode: "android_device_permission_denied",
        retryable: false,
        hint: "the host user may not open the USB device: add a udev rule for the phone's vendor id and put the user in the plugdev group, then replug",
      };
    case "authorizing":
    case "connecting":
      return {
        platformCode: "android_device_booting",
        retryable: true,
        hint: "adb is still setting up the connection: wait a moment and try again",
      };
    case "recovery":
    case "sideload":
    case "bootloader":
      return {
        platformCode: "android_device_state_unsupported",
        retryable: false,
        hint: `the phone is in ${s} mode: reboot the phone into Android`,
      };
    default:
      return {
        platformCode: "android_device_state_unsupported",
        retryable: false,
        hint: `adb reports the state "${state.trim().slice(0, 64)}", which is not a usable Android device`,
      };
  }
}

/** docs/protocol/devices-and-actions.md#android-devices: model, else product, else device name (underscores → spaces), else `Android (<serial>)`. */
export function deviceName(props: Record<string, string>, serial: string): string {
  for (const key of ["ro.product.model", "ro.product.name", "ro.product.device"]) {
    const value = props[key]?.replaceAll("_", " ").trim();
    if (value) return value;
  }
  return `Android (${serial})`;
}
