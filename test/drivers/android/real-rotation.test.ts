/**
 * `rotate` on phones as they really behave (issue 24): MIUI/ColorOS phones that refuse `settings
 * put` from adb, apps locked to one orientation and phones that never turn upside down (the
 * display stays, `settings` still succeeds), and the owner's auto-rotate put back afterwards.
 * Through the Driver port, over the real adb server, against the simulated phone.
 */
import { describe, expect, test } from "bun:test";
import { parseDisplayRotation } from "../../../drivers/android/parse/rotation.ts";
import { describeWithAdb, adbServerForFile } from "../../support/adb-device/index.ts";
import {
  attach,
  clearLogs,
  ctx,
  driverError,
  exec,
  ran,
  recordingLogger,
} from "../../support/adb-device/driver-harness.ts";
import { dumpsysInput } from "../../support/adb-device/rotation.ts";

const adb = adbServerForFile();

const typed = (code: string, message: string) => ({
  code: "platform_error",
  data: expect.objectContaining({
    retryable: false,
    details: { platformCode: code },
    message: expect.stringContaining(message),
  }),
});
const rotationSettings = (a: { phone: { settings: Map<string, string> } }) => [
  a.phone.settings.get("system/accelerometer_rotation"),
  a.phone.settings.get("system/user_rotation"),
];
const XIAOMI = { "ro.product.manufacturer": "Xiaomi", "ro.build.version.sdk": "33", "ro.build.version.release": "13" };

describeWithAdb("real phones: rotation", () => {
  describe("a phone that refuses settings from adb (MIUI, ColorOS)", () => {
    test("rotate fails with android_settings_not_permitted naming the Xiaomi setting, and the phone's rotation is unchanged", async () => {
      await using a = await attach(adb.server(), { settingsDenied: true, props: XIAOMI });
      expect(await driverError(exec(a, "rotate", { orientation: "landscape" }))).toEqual(
        typed(
          "android_settings_not_permitted",
          'on this Xiaomi phone (MIUI/HyperOS) turn on Developer options › "USB debugging (Security settings)", then reboot the phone',
        ),
      );
      expect([a.phone.rotation, ...rotationSettings(a)]).toEqual([0, "1", "0"]);
      // The Java stack trace is not in the message a user reads.
      const err = await driverError(exec(a, "rotate", { orientation: "landscape" }));
      expect(err.data.message).not.toContain("at com.android");
    });
  });

  describe("a screen that does not turn", () => {
    test("rotate fails with android_rotation_refused when the app in front is locked to portrait, and puts the settings back", async () => {
      await using a = await attach(adb.server(), { rotations: [0], rotationConfirmMs: 600 });
      expect(await driverError(exec(a, "rotate", { orientation: "landscape" }))).toEqual(
        typed(
          "android_rotation_refused",
          "the screen stayed portrait after asking for landscape: the app in front is probably locked to one orientation",
        ),
      );
      expect([a.phone.rotation, ...rotationSettings(a)]).toEqual([0, "1", "0"]);
    });

    test("rotate to reversePortrait fails on a phone that never turns upside down, saying so; landscape still works", async () => {
      await using a = await attach(adb.server(), { rotations: [0, 1, 3], rotationConfirmMs: 600 });
      expect(await exec(a, "rotate", { orientation: "landscape" })).toEqual({
        output: { accepted: true, orientation: "landscape" },
      });
      expect(await driverError(exec(a, "rotate", { orientation: "reversePortrait" }))).toEqual(
        typed(
          "android_rotation_refused",
          "the screen stayed landscape after asking for reversePortrait: many phones never turn upside down",
        ),
      );
      // Back to where this call found it: locked in landscape.
      expect([a.phone.rotation, ...rotationSettings(a)]).toEqual([1, "0", "1"]);
    });

    test("reads SurfaceOrientation on Android 9, which has no viewport line, and the viewport on Android 13", async () => {
      for (const props of [{ "ro.build.version.sdk": "28", "ro.build.version.release": "9" }, XIAOMI]) {
        await using a = await attach(adb.server(), { props, rotations: [0], rotationConfirmMs: 300 });
        expect(await driverError(exec(a, "rotate", { orientation: "reverseLandscape" }))).toEqual(
          typed("android_rotation_refused", "the screen stayed portrait"),
        );
        expect(await exec(a, "rotate", { orientation: "portrait" })).toEqual({
          output: { accepted: true, orientation: "portrait" },
        });
      }
    });

    test("rotate is accepted unconfirmed, with a warning in the log, when dumpsys input shows no rotation", async () => {
      const log = recordingLogger();
      await using a = await attach(adb.server());
      a.phone.commands.set("dumpsys", (argv, io) =>
        argv[1] === "input" ? (io.out("INPUT MANAGER (dumpsys input)\n\n"), 0) : 0,
      );
      const rotate = { name: "rotate", arguments: { orientation: "landscape" } };
      expect(await a.driver.execute(a.id, rotate, ctx(undefined, null, log))).toEqual({
        output: { accepted: true, orientation: "landscape" },
      });
      expect(log.lines).toContainEqual(
        expect.objectContaining({
          level: "warn",
          msg: "dumpsys input shows no display rotation: rotate is not confirmed",
        }),
      );
    });
  });

  describe("the owner's settings", () => {
    test("disconnect puts back auto-rotate and the rotation the owner had before the first rotate", async () => {
      await using a = await attach(adb.server(), { connect: false });
      a.phone.settings.set("system/accelerometer_rotation", "0");
      a.phone.settings.set("system/user_rotation", "3");
      await a.driver.connect(a.id, ctx());
      for (const orientation of ["landscape", "portrait"]) await exec(a, "rotate", { orientation });
      expect(rotationSettings(a)).toEqual(["0", "0"]);
      clearLogs(a.phone);
      await a.driver.disconnect(a.id, ctx());
      expect([rotationSettings(a), ran(a.phone).filter((c) => c[0] === "settings")]).toEqual([
        ["0", "3"],
        [
          ["settings", "put", "system", "user_rotation", "3"],
          ["settings", "put", "system", "accelerometer_rotation", "0"],
        ],
      ]);
      // Once only: a second disconnect (nothing rotated since) changes nothing.
      clearLogs(a.phone);
      await a.driver.connect(a.id, ctx());
      clearLogs(a.phone);
      await a.driver.disconnect(a.id, ctx());
      expect(ran(a.phone).filter((c) => c[0] === "settings")).toEqual([]);
    });

    test("a daemon that stops turns auto-rotate back on, and deletes a rotation key the phone did not have", async () => {
      await using a = await attach(adb.server(), { connect: false });
      a.phone.settings.delete("system/user_rotation");
      await a.driver.connect(a.id, ctx());
      await exec(a, "rotate", { orientation: "landscape" });
      expect([a.phone.rotation, ...rotationSettings(a)]).toEqual([1, "0", "1"]);
      await a.driver.stop();
      expect([a.phone.rotation, ...rotationSettings(a)]).toEqual([0, "1", undefined]);
    });

    test("a disconnect without any rotate leaves the settings alone", async () => {
      await using a = await attach(adb.server());
      await a.driver.disconnect(a.id, ctx());
      expect([ran(a.phone).filter((c) => c[0] === "settings"), rotationSettings(a)]).toEqual([[], ["1", "0"]]);
    });
  });
});

describe("parseDisplayRotation", () => {
  test("reads display 0's viewport before SurfaceOrientation, in either orientation format", () => {
    const viewport = (o: string, id = 0) =>
      `  Viewport INTERNAL: displayId=${id}, uniqueId=local:1, port=0, orientation=${o}, logicalFrame=[0, 0, 1, 1], isActive=[1]`;
    expect([
      parseDisplayRotation(dumpsysInput(34, 3, { width: 1080, height: 2400, displayId: "1", port: 0 })),
      parseDisplayRotation(dumpsysInput(28, 2, { width: 1080, height: 2400, displayId: "1", port: 0 })),
      parseDisplayRotation(`    SurfaceOrientation: 0\n${viewport("1")}`),
      parseDisplayRotation(viewport("ROTATION_270")),
      parseDisplayRotation(viewport("ROTATION_0")),
      parseDisplayRotation(`${viewport("2", 1)}\n`),
      parseDisplayRotation(viewport("7")),
      parseDisplayRotation(""),
    ]).toEqual([3, 2, 1, 3, 0, null, null, null]);
  });
});
