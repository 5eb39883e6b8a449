/**
 * Through the real daemon and the real adb server (issue 24): a tree failure keeps the
 * observation's screenshot, says why in metadata.uiTreeError, and semantic actions fail with the
 * tree's own typed error.
 */
import { expect, test } from "bun:test";
import { adbServerForFile, demoScenario, describeWithAdb, startFakeDevice } from "../support/adb-device/index.ts";
import { spawnDaemon } from "../support/daemon.ts";

const { server, androidEnv } = adbServerForFile();

describeWithAdb("the daemon observing an Android phone whose accessibility bridge is busy", () => {
  test("records the screenshot with uiSnapshotOmission driverUnsupported and metadata.uiTreeError, and a semantic action fails with android_ui_automation_busy", async () => {
    await using phone = await startFakeDevice(server(), { scenario: demoScenario });
    phone.phone.faults.uiautomationHolder = "io.appium.uiautomator2.server";
    await using d = spawnDaemon({ env: androidEnv() });
    await d.hello();
    await d.call("device.connect");
    await d.call("session.start");
    const obs = (await d.call("device.observe")).result;
    expect([obs.screenshot !== null, obs.uiSnapshot, obs.uiSnapshotOmission]).toEqual([
      true,
      undefined,
      "driverUnsupported",
    ]);
    expect(obs.metadata.uiTreeError).toEqual({
      code: "platform_error",
      platformCode: "android_ui_automation_busy",
      retryable: true,
      message: expect.stringContaining("held by Appium (UiAutomator2 driver) (process io.appium.uiautomator2.server"),
    });
    const tap = await d.call(
      "device.execute",
      {
        id: crypto.randomUUID(),
        name: "tapElement",
        arguments: {
          target: {
            kind: "selector",
            selector: {
              context: null,
              role: null,
              name: null,
              value: null,
              identifier: "sign_in",
              text: null,
              css: null,
            },
          },
        },
      },
      { timeoutMs: 20_000 },
    );
    expect([tap.error?.data?.details?.platformCode, tap.error?.data?.retryable]).toEqual([
      "android_ui_automation_busy",
      true,
    ]);
    await d.call("session.end");
    expect(await d.close()).toBe(0);
  }, 60_000);
});
