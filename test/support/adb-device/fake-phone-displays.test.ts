/** The simulated phone's switches for several physical displays and for a past ANR. */
import { describe, expect, test } from "bun:test";
import { pngSize } from "../../../src/driver/png.ts";
import { type CommandIo, concat, StdinBuffer, bytes, text } from "./command-io.ts";
import { demoScenario } from "./demo-scenario.ts";
import { FOLDABLE_DISPLAYS, FOLDED_DISPLAYS, INVALID_DISPLAY_ID, MULTI_DISPLAY_WARNING } from "./displays.ts";
import { FakePhone, type FakePhoneOptions } from "./fake-phone.ts";

/** Runs a command line as the exec: service would, keeping stdout and stderr apart as bytes. */
async function run(phone: FakePhone, line: string) {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const stdin = new StdinBuffer();
  stdin.end();
  const io: CommandIo = {
    stdin,
    out: (d) => void out.push(bytes(d)),
    err: (d) => void err.push(bytes(d)),
    signal: new AbortController().signal,
    unplug: () => {},
  };
  const status = await phone.runCommand({ kind: "exec", command: line, pty: false }, io, stdin);
  return { status, out: concat(out), err: text(concat(err)) };
}

const foldable = (options: FakePhoneOptions = {}) =>
  new FakePhone({
    scenario: demoScenario,
    props: { "ro.build.version.sdk": "34" },
    displays: FOLDABLE_DISPLAYS,
    ...options,
  });

describe("several physical displays", () => {
  test("screencap without -d warns on stderr and captures the first display on Android 14", async () => {
    const phone = foldable();
    const r = await run(phone, "screencap -p");
    expect([r.status, r.err, pngSize(r.out)]).toEqual([0, MULTI_DISPLAY_WARNING, { width: 1080, height: 2400 }]);
  });

  test("screencap prints no warning before Android 14 or with one display", async () => {
    const older = await run(foldable({ props: { "ro.build.version.sdk": "33" } }), "screencap -p");
    const single = await run(new FakePhone({ props: { "ro.build.version.sdk": "34" } }), "screencap -p");
    expect([older.err, single.err]).toEqual(["", ""]);
  });

  test("screencap -d captures the named panel, black at its own size when it is off", async () => {
    const phone = foldable({ displays: FOLDED_DISPLAYS });
    const [inner, outer] = FOLDED_DISPLAYS;
    const off = await run(phone, `screencap -p -d ${inner?.physicalId}`);
    const on = await run(phone, `screencap -p -d ${outer?.physicalId}`);
    expect([off.err, pngSize(off.out), on.err]).toEqual(["", { width: 2076, height: 2152 }, ""]);
    expect(on.out).toEqual(phone.screenshot());
    expect(off.out).not.toEqual(phone.screenshot());
  });

  test("screencap -d refuses an id that is not a 64-bit decimal number", async () => {
    const phone = foldable();
    expect(await run(phone, "screencap -p -d 18446744073709551616")).toEqual({
      status: 1,
      out: new Uint8Array(0),
      err: INVALID_DISPLAY_ID,
    });
    expect((await run(phone, "screencap -p -d local:1")).err).toBe(INVALID_DISPLAY_ID);
  });

  test("dumpsys SurfaceFlinger --display-id and cmd display get-displays list the panels", async () => {
    const phone = foldable({ displays: FOLDED_DISPLAYS });
    const sf = await run(phone, "dumpsys SurfaceFlinger --display-id");
    const logical = await run(phone, "cmd display get-displays");
    expect(text(sf.out)).toBe(
      'Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="EMU_display_0"\nDisplay 4619827551948147201 (HWC display 1): port=1 pnpId=GGL displayName="EMU_display_1"\n',
    );
    expect(text(logical.out)).toBe(
      'Displays:\nDisplay id 0: DisplayInfo{"Built-in Screen", displayId 0, state OFF, type INTERNAL, uniqueId "local:4619827259835644672", app 2076 x 2152}\n' +
        'Display id 3: DisplayInfo{"Second Screen", displayId 3, state ON, type INTERNAL, uniqueId "local:4619827551948147201", app 1080 x 2424}\n',
    );
    expect(phone.problems).toEqual([]);
  });

  test("a phone left at its defaults has one display of its screen size", async () => {
    const phone = new FakePhone({ screen: { width: 720, height: 1600 } });
    expect(text((await run(phone, "dumpsys SurfaceFlinger --display-id")).out)).toBe(
      'Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="EMU_display_0"\n',
    );
    expect(text((await run(phone, "cmd display get-displays")).out)).toContain(
      'state ON, type INTERNAL, uniqueId "local:4619827259835644672", app 720 x 1600}',
    );
  });
});

describe("the last ANR", () => {
  const anr = { lastAnr: { package: "com.android.settings", activity: "com.android.settings.Settings" } };

  test("full dumpsys window starts with the frozen section naming the app that stopped responding", async () => {
    const phone = new FakePhone({ scenario: demoScenario, props: { "ro.build.version.sdk": "34" }, ...anr });
    const lines = text((await run(phone, "dumpsys window")).out)
      .replace(/\{[0-9a-f]{7} /g, "{H ")
      .split("\n");
    expect(lines).toEqual([
      "WINDOW MANAGER LAST ANR (dumpsys window lastanr)",
      "  ANR time: 2025年4月7日 20:17:01",
      "  Application at fault: ActivityRecord{H u0 com.android.settings/.Settings",
      "",
      "  Display #0 currentFocus=Window{H u0 com.android.settings/com.android.settings.Settings} focusedApp=ActivityRecord{H u0 com.android.settings/.Settings t11}",
      "",
      "Last ANR continued",
      "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
      "  mCurrentFocus=Window{H u0 com.android.settings/com.android.settings.Settings}",
      "  mFocusedApp=ActivityRecord{H u0 com.android.settings/.Settings t11}",
      "",
      "WINDOW MANAGER WINDOWS (dumpsys window windows)",
      "  mCurrentFocus=Window{H u0 com.example.app/com.example.app.LoginActivity}",
      "  mFocusedApp=ActivityRecord{H u0 com.example.app/.LoginActivity t13}",
      "",
    ]);
  });

  test("a section argument prints that section alone, without the frozen one", async () => {
    const phone = new FakePhone({ scenario: demoScenario, ...anr });
    const displays = text((await run(phone, "dumpsys window displays")).out);
    const windows = text((await run(phone, "dumpsys window windows")).out);
    expect([displays, windows].map((o) => o.includes("LAST ANR") || o.includes("com.android.settings"))).toEqual([
      false,
      false,
    ]);
    expect(displays.split("\n")[0]).toBe("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)");
  });

  test("without an ANR the full dump is the windows section, as before", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    expect(text((await run(phone, "dumpsys window")).out).split("\n")[0]).toBe(
      "WINDOW MANAGER WINDOWS (dumpsys window windows)",
    );
  });
});
