import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { deviceName, stateProblem, toAdbState } from "../../../../drivers/android/parse/devices.ts";
import { DEFAULT_PROPS } from "../../../support/adb-device/index.ts";

/** `adb devices -l` as recorded from the real adb binary (fixtures/platform/adb). */
const recorded = JSON.parse(
  readFileSync(new URL("../../../../fixtures/platform/adb/devices-l.json", import.meta.url), "utf8"),
) as { stdout: string };

describe("toAdbState", () => {
  test("drops adb's reason when the state is no permissions and maps the unknown to unknown", () => {
    expect(
      [
        "device",
        " offline ",
        "no permissions (user in plugdev group; are your udev rules wrong?)",
        "sideload",
        "rescue",
        "",
      ].map(toAdbState),
    ).toEqual(["device", "offline", "no permissions", "sideload", "unknown", "unknown"]);
  });
});

describe("stateProblem", () => {
  test("returns null when the device is ready", () => {
    expect(stateProblem("device")).toBeNull();
  });

  test("names the platform code, retryability and a hint when the state is not usable", () => {
    const states = [
      "unauthorized",
      "offline",
      "no permissions (user in plugdev group; are your udev rules wrong?)",
      "authorizing",
      "connecting",
      "recovery",
      "sideload",
      "bootloader",
      "host",
      "rescue",
    ];
    const booting = {
      platformCode: "android_device_booting",
      retryable: true,
      hint: "adb is still setting up the connection: wait a moment and try again",
    };
    const mode = (m: string) => ({
      platformCode: "android_device_state_unsupported",
      retryable: false,
      hint: `the phone is in ${m} mode: reboot the phone into Android`,
    });
    expect(Object.fromEntries(states.map((s) => [s, stateProblem(s)]))).toEqual({
      unauthorized: {
        platformCode: "android_device_unauthorized",
        retryable: true,
        hint: "accept the USB debugging prompt on the phone (and tick 'Always allow'), then try again",
      },
      offline: {
        platformCode: "android_device_offline",
        retryable: true,
        hint: "reconnect the cable or run `adb reconnect offline`",
      },
      "no permissions (user in plugdev group; are your udev rules wrong?)": {
        platformCode: "android_device_permission_denied",
        retryable: false,
        hint: "the host user may not open the USB device: add a udev rule for the phone's vendor id and put the user in the plugdev group, then replug",
      },
      authorizing: booting,
      connecting: booting,
      recovery: mode("recovery"),
      sideload: mode("sideload"),
      bootloader: mode("bootloader"),
      host: {
        platformCode: "android_device_state_unsupported",
        retryable: false,
        hint: 'adb reports the state "host", which is not a usable Android device',
      },
      rescue: {
        platformCode: "android_device_state_unsupported",
        retryable: false,
        hint: 'adb reports the state "rescue", which is not a usable Android device',
      },
    });
  });

  test("classifies each state when the lines come from real adb", () => {
    const states = recorded.stdout
      .split("\n")
      .slice(1)
      .filter((l) => l.trim())
      .map((l) => l.split(/\s+/)[1] as string);
    expect(states.map((s) => stateProblem(s)?.platformCode ?? null)).toEqual(["android_device_unauthorized", null]);
  });
});

describe("deviceName", () => {
  test("prefers model, then product, then device, with underscores as spaces", () => {
    expect([
      deviceName({ ...DEFAULT_PROPS }, "FAKE0001"),
      deviceName(
        { "ro.product.model": "", "ro.product.name": "sdk_gphone64_x86_64", "ro.product.device": "emu64x" },
        "emulator-5554",
      ),
      deviceName({ "ro.product.model": " _ ", "ro.product.device": "raven" }, "1A2B3C"),
      deviceName({}, "192.168.1.20:5555"),
    ]).toEqual(["Fake Pixel", "sdk gphone64 x86 64", "raven", "Android (192.168.1.20:5555)"]);
  });
});
