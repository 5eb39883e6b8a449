/**
 * The Android driver against what real phones do on the platform side (issue 24): a clipboard
 * without a shell command (every stock Android), apps with several launcher activities, over the
 * real adb server and the simulated phone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AdbServer, DEMO_PACKAGE, describeWithAdb, type FakePhone, startAdbServer } from "../../support/adb-device/index.ts";
import { type Attached, attach, clearLogs, ctx, driverError, ran, TRAILER } from "../../support/adb-device/driver-harness.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

const exec = (a: Attached, name: string, args: unknown = {}) => a.driver.execute(a.id, { name, arguments: args }, ctx());
const demo = (phone: FakePhone) => phone.runtime(DEMO_PACKAGE).state;

describeWithAdb("non-ASCII text on a stock phone (clipboard without a shell command)", () => {
  test("inputText fails with android_text_unsupported naming the helper and types nothing when the phone is stock", async () => {
    await using a = await attach(server);
    await exec(a, "tap", { x: 540, y: 440 });
    clearLogs(a.phone);
    const err = await driverError(exec(a, "inputText", { text: "ab Grüße" }));
    expect([err.code, err.data.retryable, (err.data.details as { platformCode: string }).platformCode]).toEqual(["platform_error", false, "android_text_unsupported"]);
    expect(err.data.message).toStartWith("stock Android offers no shell path for non-ASCII text");
    expect(err.data.message).toContain("io.appium.settings Unicode IME");
    expect(err.data.message).toContain("for now type ASCII text only");
    expect(err.data.message).not.toContain("Android 12");
    // The probe ran and the phone answered as stock Android does: the message, status 0.
    expect(a.phone.commandLog.map((r) => [r.argv, r.exitCode])).toEqual([
      [["cmd", "clipboard", "set", "text", ""], 0],
      [expect.anything(), 0],
    ]);
    expect(ran(a.phone)).toEqual([["cmd", "clipboard", "set", "text", ""], TRAILER]);
    // Nothing half-typed, not even the ASCII prefix.
    expect([demo(a.phone).username, a.phone.inputLog]).toEqual(["", []]);
    // Asked once per device: the second refusal runs nothing.
    clearLogs(a.phone);
    expect((await driverError(exec(a, "inputText", { text: "東京" }))).data.details).toEqual({ platformCode: "android_text_unsupported" });
    expect(a.phone.commandLog).toEqual([]);
  });
});
