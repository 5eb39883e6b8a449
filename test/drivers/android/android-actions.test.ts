/**
 * AndroidDriver.execute and the element primitives over the real adb server: the exact command
 * each action runs on the phone, its effect there, quoting against shell injection, and argument
 * validation before anything runs.
 */
import { expect, test } from "bun:test";
import {
  type CommandFn,
  DEMO_PACKAGE,
  describeWithAdb,
  type FakePhone,
  type Scenario,
  adbServerForFile,
} from "../../support/adb-device/index.ts";
import {
  type Attached,
  attach,
  clearLogs,
  ctx,
  driverError,
  dumpsIn,
  invalidArguments,
  platformError,
  ran,
  TRAILER,
  withoutDumps,
  exec,
  demo,
} from "../../support/adb-device/driver-harness.ts";

const adb = adbServerForFile();

/** Focuses the demo app's username field and forgets that tap. */
async function focusUsername(a: Attached): Promise<void> {
  await exec(a, "tap", { x: 540, y: 440 });
  clearLogs(a.phone);
}

/** A full-screen scrollable list that records how far each swipe asked it to move. */
const scrolled: { dx: number; dy: number }[] = [];
const SCROLL_APP: Scenario = {
  package: "com.example.scroll",
  activity: "com.example.scroll.Main",
  initial: "main",
  state: {},
  screens: {
    main: (_s, view) => ({
      className: "android.widget.ScrollView",
      resourceId: "com.example.scroll:id/list",
      scrollable: true,
      bounds: [0, 0, view.width, view.height],
      onScroll: (_c, d) => void scrolled.push(d),
    }),
  },
};

describeWithAdb("AndroidDriver.execute pointer actions", () => {
  test("tap runs one quoted input tap that hits the node when the point is on it", async () => {
    await using a = await attach(adb.server());
    expect(await exec(a, "tap", { x: 540, y: 440 })).toEqual({ output: { accepted: true, x: 540, y: 440 } });
    expect(a.phone.serviceLog.map((s) => s.command)).toEqual([
      `'input' 'tap' '540' '440'; echo "\n__devicerail_exit_$?"`,
    ]);
    expect([ran(a.phone), a.phone.inputLog, a.phone.problems]).toEqual([
      [["input", "tap", "540", "440"], TRAILER],
      [{ kind: "tap", x: 540, y: 440, target: "com.example.app:id/username" }],
      [],
    ]);
  });

  test("doubleTap taps twice in one shell command when asked once", async () => {
    await using a = await attach(adb.server());
    expect(await exec(a, "doubleTap", { x: 540, y: 760 })).toEqual({ output: { accepted: true, x: 540, y: 760 } });
    expect([a.phone.serviceLog.length, ran(a.phone), demo(a.phone).remember]).toEqual([
      1,
      [["input", "tap", "540", "760"], ["input", "tap", "540", "760"], TRAILER],
      false,
    ]);
    expect(a.phone.inputLog.map((r) => r.kind === "tap" && r.target)).toEqual([
      "com.example.app:id/remember",
      "com.example.app:id/remember",
    ]);
  });

  test("longPress is a swipe on the spot for 800 ms when durationMs is absent, else for durationMs", async () => {
    await using a = await attach(adb.server());
    expect(await exec(a, "longPress", { x: 540, y: 760 })).toEqual({
      output: { accepted: true, x: 540, y: 760, durationMs: 800 },
    });
    expect(await exec(a, "longPress", { x: 10, y: 20, durationMs: 1500 })).toEqual({
      output: { accepted: true, x: 10, y: 20, durationMs: 1500 },
    });
    expect(ran(a.phone)).toEqual([
      ["input", "swipe", "540", "760", "540", "760", "800"],
      TRAILER,
      ["input", "swipe", "10", "20", "10", "20", "1500"],
      TRAILER,
    ]);
    expect(a.phone.inputLog).toEqual([
      { kind: "swipe", x1: 540, y1: 760, x2: 540, y2: 760, durationMs: 800, target: null },
      { kind: "swipe", x1: 10, y1: 20, x2: 10, y2: 20, durationMs: 1500, target: null },
    ]);
  });

  test("swipe runs input swipe with both points and the duration when both are on screen", async () => {
    await using a = await attach(adb.server(), { scenario: SCROLL_APP });
    scrolled.length = 0;
    const args = { startX: 540, startY: 1800, endX: 500, endY: 600, durationMs: 250 };
    expect(await exec(a, "swipe", args)).toEqual({ output: { accepted: true, ...args } });
    expect([ran(a.phone), scrolled]).toEqual([
      [["input", "swipe", "540", "1800", "500", "600", "250"], TRAILER],
      [{ dx: 40, dy: 1200 }],
    ]);
  });

  test("scroll is a 300 ms centred swipe kept 25 % inside the edges when the deltas are positive, negative or huge", async () => {
    await using a = await attach(adb.server(), { scenario: SCROLL_APP });
    scrolled.length = 0;
    for (const [deltaX, deltaY] of [
      [0, 500],
      [0, -100000],
      [300, 0],
      [-100000, 100000],
    ])
      expect(await exec(a, "scroll", { deltaX, deltaY })).toEqual({ output: { accepted: true, deltaX, deltaY } });
    // 1080x2400: centre (540, 1200); the gesture stays within x 270..810 and y 600..1800.
    expect(ran(a.phone).filter((c) => c !== TRAILER)).toEqual([
      ["input", "swipe", "540", "1450", "540", "950", "300"],
      ["input", "swipe", "540", "600", "540", "1800", "300"],
      ["input", "swipe", "690", "1200", "390", "1200", "300"],
      ["input", "swipe", "270", "1800", "810", "600", "300"],
    ]);
    expect(scrolled).toEqual([
      { dx: 0, dy: 500 },
      { dx: 0, dy: -1200 },
      { dx: 300, dy: 0 },
      { dx: -540, dy: 1200 },
    ]);
  });
});

describeWithAdb("AndroidDriver.execute keys and navigation", () => {
  test("keyPress sends each of the nine keys as one input keyevent that edits the field when one is focused", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    await exec(a, "inputText", { text: "abc" });
    a.phone.commandLog.length = 0;
    const keys = {
      enter: 66,
      tab: 61,
      escape: 111,
      delete: 67,
      space: 62,
      arrowUp: 19,
      arrowDown: 20,
      arrowLeft: 21,
      arrowRight: 22,
    };
    const outputs = [];
    for (const key of [
      "arrowLeft",
      "delete",
      "space",
      "arrowRight",
      "arrowUp",
      "arrowDown",
      "tab",
      "escape",
      "enter",
    ] as const)
      outputs.push((await exec(a, "keyPress", { key })).output);
    expect(outputs).toEqual(
      ["arrowLeft", "delete", "space", "arrowRight", "arrowUp", "arrowDown", "tab", "escape", "enter"].map((key) => ({
        accepted: true,
        key,
      })),
    );
    expect(ran(a.phone).filter((c) => c !== TRAILER)).toEqual(
      ["arrowLeft", "delete", "space", "arrowRight", "arrowUp", "arrowDown", "tab", "escape", "enter"].map((k) => [
        "input",
        "keyevent",
        String(keys[k as keyof typeof keys]),
      ]),
    );
    // "abc", cursor left of c; DEL removes b; space is typed there.
    expect(demo(a.phone).username).toBe("a c");
  });

  test("back, home and recentApps send KEYCODE_BACK, HOME and APP_SWITCH when called without arguments", async () => {
    await using a = await attach(adb.server());
    a.phone.runtime().context().goto("home");
    expect(await exec(a, "back")).toEqual({ output: { accepted: true } });
    expect(a.phone.runtime().screen).toBe("login");
    expect(await exec(a, "home")).toEqual({ output: { accepted: true } });
    expect(a.phone.foreground).toBe("com.android.launcher3");
    expect(await exec(a, "recentApps")).toEqual({ output: { accepted: true } });
    expect(ran(a.phone)).toEqual([
      ["input", "keyevent", "4"],
      TRAILER,
      ["input", "keyevent", "3"],
      TRAILER,
      ["input", "keyevent", "187"],
      TRAILER,
    ]);
  });
});

const RESOLVE = [
  "cmd",
  "package",
  "resolve-activity",
  "--brief",
  "--user",
  "current",
  "-a",
  "android.intent.action.MAIN",
  "-c",
  "android.intent.category.LAUNCHER",
];
const quoted = (argv: string[]) => `${argv.map((a) => `'${a}'`).join(" ")}; echo "\n__devicerail_exit_$?"`;
/** Makes the phone answer every `cmd` (or `am`) with `out`, as a different Android build might. */
const answer = (phone: FakePhone, command: "cmd" | "am", out: string) =>
  phone.commands.set(command, (_argv, io) => (io.out(out), 0));

describeWithAdb("AndroidDriver.execute launch", () => {
  test("launch resolves the launcher activity for the current user and starts it with am start -W when the package is installed", async () => {
    await using a = await attach(adb.server());
    expect(await exec(a, "launch", { packageName: "com.android.settings" })).toEqual({ output: { accepted: true } });
    const start = [
      "am",
      "start",
      "-W",
      "--user",
      "current",
      "-n",
      "com.android.settings/com.android.settings.Settings",
    ];
    // Every argument reaches the shell single-quoted, the resolved component included.
    expect(a.phone.serviceLog.map((s) => s.command)).toEqual([
      quoted([...RESOLVE, "com.android.settings"]),
      quoted(start),
    ]);
    expect([ran(a.phone), a.phone.foreground, a.phone.problems]).toEqual([
      [[...RESOLVE, "com.android.settings"], TRAILER, start, TRAILER],
      "com.android.settings",
      [],
    ]);
  });

  test("launch settles only after am start -W has reported when the launch is slow, so the next observation shows the app", async () => {
    await using a = await attach(adb.server());
    const am = a.phone.commands.get("am") as CommandFn;
    const gate = Promise.withResolvers<void>();
    a.phone.commands.set("am", async (argv, io) => {
      await gate.promise;
      return am(argv, io);
    });
    let settled = false;
    const launched = exec(a, "launch", { packageName: "com.android.settings" }).finally(() => (settled = true));
    await a.phone.waitForCommand("am");
    expect([settled, a.phone.foreground]).toEqual([false, DEMO_PACKAGE]);
    gate.resolve();
    expect(await launched).toEqual({ output: { accepted: true } });
    const after = await a.driver.observe(a.id, { screenshot: true, uiTree: true }, ctx());
    expect([
      after.uiTree?.context.contextId,
      (after.metadata.foreground as { packageName: string }).packageName,
      after.screenshot,
    ]).toEqual(["com.android.settings", "com.android.settings", a.phone.screenshot()]);
  });

  test("launch fails with android_app_launch_error and starts nothing when the package is unknown or has no launcher activity", async () => {
    await using a = await attach(adb.server());
    const errors = [];
    for (const packageName of ["com.example.missing", "com.android.launcher3"])
      errors.push(await driverError(exec(a, "launch", { packageName })));
    expect(errors).toEqual([
      platformError("android_app_launch_error", false),
      platformError("android_app_launch_error", false),
    ]);
    expect([ran(a.phone), a.phone.foreground]).toEqual([
      [[...RESOLVE, "com.example.missing"], TRAILER, [...RESOLVE, "com.android.launcher3"], TRAILER],
      DEMO_PACKAGE,
    ]);
  });

  test("launch fails with android_app_launch_error when am start prints an Error line or the package resolves to another package's activity", async () => {
    await using a = await attach(adb.server());
    answer(
      a.phone,
      "cmd",
      "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.android.settings/.Gone\n",
    );
    expect(await driverError(exec(a, "launch", { packageName: "com.android.settings" }))).toEqual(
      platformError("android_app_launch_error", false),
    );
    // (The platform's chooser, android/…ResolverActivity, is an app with several launcher
    // activities: real-platform.test.ts covers it.)
    answer(
      a.phone,
      "cmd",
      "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.android.chrome/com.google.android.apps.chrome.Main\n",
    );
    expect(await driverError(exec(a, "launch", { packageName: "com.android.settings" }))).toEqual(
      platformError("android_app_launch_error", false),
    );
    expect([ran(a.phone).filter((c) => c[0] === "am"), a.phone.foreground]).toEqual([
      [["am", "start", "-W", "--user", "current", "-n", "com.android.settings/com.android.settings.Gone"]],
      DEMO_PACKAGE,
    ]);
  });

  test("launch fails with a retryable android_app_launch_timeout when am start -W reports Status: timeout, and succeeds when retried", async () => {
    await using a = await attach(adb.server());
    a.phone.faults.launchTimeouts = 1;
    expect(await driverError(exec(a, "launch", { packageName: "com.android.settings" }))).toEqual(
      platformError("android_app_launch_timeout", true),
    );
    expect(await exec(a, "launch", { packageName: "com.android.settings" })).toEqual({ output: { accepted: true } });
    expect(ran(a.phone).filter((c) => c[0] === "am").length).toBe(2);
  });

  test("launch fails with a retryable android_app_launch_invalid_result when resolve-activity or am start prints something else", async () => {
    await using a = await attach(adb.server());
    const errors = [];
    answer(a.phone, "am", "Starting: Intent { cmp=com.android.settings/.Settings }\nStatus: ok\nLaunchState: COLD\n");
    errors.push(await driverError(exec(a, "launch", { packageName: "com.android.settings" })));
    answer(a.phone, "cmd", "Segmentation fault\n");
    errors.push(await driverError(exec(a, "launch", { packageName: "com.android.settings" })));
    a.phone.commands.delete("cmd");
    errors.push(await driverError(exec(a, "launch", { packageName: "com.android.settings" })));
    expect(errors).toEqual(Array(3).fill(platformError("android_app_launch_invalid_result", true)));
    // The last one: an Android without `cmd`, whose shell says so.
    expect(a.phone.problems).toEqual([`unknown command: ${[...RESOLVE, "com.android.settings"].join(" ")}`]);
  });
});

describeWithAdb("AndroidDriver.execute apps, links and rotation", () => {
  test("terminate force-stops the package and shows the launcher when the app was in front", async () => {
    await using a = await attach(adb.server());
    demo(a.phone).username = "kept?";
    expect(await exec(a, "terminate", { packageName: DEMO_PACKAGE })).toEqual({ output: { accepted: true } });
    expect([ran(a.phone), a.phone.foreground, a.phone.apps.get(DEMO_PACKAGE)?.runtime]).toEqual([
      [["am", "force-stop", DEMO_PACKAGE], TRAILER],
      "com.android.launcher3",
      null,
    ]);
  });

  test("openUrl starts a VIEW intent and waits, and fails with android_app_launch_error when nothing handles the URL", async () => {
    await using a = await attach(adb.server());
    const url = "https://example.com/a?b=1&c=2#top";
    expect(await exec(a, "openUrl", { url })).toEqual({ output: { accepted: true } });
    expect([a.phone.foreground, a.phone.apps.get("com.android.chrome")?.url]).toEqual(["com.android.chrome", url]);
    expect(await driverError(exec(a, "openUrl", { url: "nohandler://x" }))).toEqual(
      platformError("android_app_launch_error", false),
    );
    expect(ran(a.phone)).toEqual([
      ["am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url],
      TRAILER,
      ["am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", "nohandler://x"],
      TRAILER,
    ]);
  });

  test("rotate sets user_rotation, turns auto-rotation off and reads the display's rotation back, for each orientation", async () => {
    await using a = await attach(adb.server());
    const seen = [];
    for (const orientation of ["landscape", "reversePortrait", "reverseLandscape", "portrait"]) {
      expect(await exec(a, "rotate", { orientation })).toEqual({ output: { accepted: true, orientation } });
      seen.push([
        a.phone.settings.get("system/accelerometer_rotation"),
        a.phone.settings.get("system/user_rotation"),
        a.phone.rotation,
      ]);
    }
    expect(seen).toEqual([
      ["0", "1", 1],
      ["0", "2", 2],
      ["0", "3", 3],
      ["0", "0", 0],
    ]);
    expect(ran(a.phone).slice(0, 8)).toEqual([
      ["settings", "get", "system", "accelerometer_rotation"],
      ["settings", "get", "system", "user_rotation"],
      TRAILER,
      ["settings", "put", "system", "user_rotation", "1"],
      ["settings", "put", "system", "accelerometer_rotation", "0"],
      TRAILER,
      ["dumpsys", "input"],
      TRAILER,
    ]);
  });
});

describeWithAdb("AndroidDriver.execute inputText", () => {
  test("types ASCII with spaces and a literal %s through input text, splitting so %s never forms", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    const text = "a b %s c 100%";
    expect(await exec(a, "inputText", { text })).toEqual({ output: { accepted: true, byteLength: 13, via: "input" } });
    // Then one dump reads the field back.
    expect([withoutDumps(ran(a.phone)), dumpsIn(ran(a.phone)), demo(a.phone).username]).toEqual([
      [["input", "text", "a%sb%s%"], ["input", "text", "s%sc%s100%"], TRAILER],
      1,
      text,
    ]);
  });

  test("sends a newline and a tab as ENTER and TAB key events between input text calls", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    expect(await exec(a, "inputText", { text: "ab\ncd\te" })).toEqual({
      output: { accepted: true, byteLength: 7, via: "input" },
    });
    expect(ran(a.phone)).toEqual([
      ["input", "text", "ab"],
      ["input", "keyevent", "66"],
      ["input", "text", "cd"],
      ["input", "keyevent", "61"],
      ["input", "text", "e"],
      TRAILER,
    ]);
    expect(demo(a.phone).username).toBe("abcde");
  });

  test("types non-ASCII text exactly through the clipboard and KEYCODE_PASTE when the clipboard has a shell command", async () => {
    await using a = await attach(adb.server(), { clipboardShell: true });
    await focusUsername(a);
    const text = "Grüße, 東京 👋";
    expect(await exec(a, "inputText", { text })).toEqual({
      output: { accepted: true, byteLength: new TextEncoder().encode(text).length, via: "mixed" },
    });
    expect([withoutDumps(ran(a.phone)), a.phone.problems]).toEqual([
      [
        // Asked once per device before anything is typed, so a refusal leaves the field untouched.
        ["cmd", "clipboard", "set", "text", ""],
        TRAILER,
        ["input", "text", "Gr"],
        ["cmd", "clipboard", "set", "text", "üß"],
        ["input", "keyevent", "279"],
        ["input", "text", "e,%s"],
        ["cmd", "clipboard", "set", "text", "東京"],
        ["input", "keyevent", "279"],
        ["input", "text", "%s"],
        ["cmd", "clipboard", "set", "text", "👋"],
        ["input", "keyevent", "279"],
        TRAILER,
      ],
      [],
    ]);
    expect(demo(a.phone).username).toBe(text);
  });

  test("fails with android_text_unsupported saying why and types nothing when the clipboard has no shell command", async () => {
    await using a = await attach(adb.server(), { clipboardShell: false });
    await focusUsername(a);
    const err = await driverError(exec(a, "inputText", { text: "Grüße, 東京 👋" }));
    expect(err).toEqual(
      platformError(
        "android_text_unsupported",
        false,
        "stock Android offers no shell path for non-ASCII text: `input text` types ASCII only and the clipboard service has no shell command on any Android release " +
          '(`cmd clipboard` answers "No shell command implementation."). Appium\'s io.appium.settings types any text through its Unicode IME: install it with ' +
          "`devicerail android helper install` (and leave DEVICERAIL_ANDROID_HELPER at use or install); without it, type ASCII text only (printable ASCII, newline and tab)",
      ),
    );
    // Nothing half-typed: the field must not hold a prefix of the text.
    expect([demo(a.phone).username, a.phone.inputLog]).toEqual(["", []]);
  });
});

const NASTY = [
  "a;id",
  "$(id)",
  "`id`",
  "it's",
  'say "hi"',
  "back\\slash\\",
  "x && reboot",
  "a | cat",
  "> /sdcard/pwn",
  "${HOME}$? $0",
  "--help",
  "-e",
];

describeWithAdb("AndroidDriver.execute against shell injection", () => {
  test("inputText delivers the text verbatim and runs nothing else when it is full of shell syntax", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    const text = `${NASTY.join(" ")}\nline2;$(reboot)`;
    await exec(a, "inputText", { text });
    expect(demo(a.phone).username).toBe(text.replace("\n", ""));
    const typed = ran(a.phone).filter((c) => c !== TRAILER);
    expect(
      typed.every(
        (c) => c[0] === "input" && (c[1] === "text" || (c[1] === "keyevent" && c[2] === "66")) && c.length === 3,
      ),
    ).toBe(true);
    expect([a.phone.problems, a.phone.files.has("/sdcard/pwn"), a.phone.serviceLog.length]).toEqual([[], false, 1]);
  });

  test("inputText types exactly the value when it is one shell metacharacter sequence alone", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    const got = [];
    for (const text of NASTY) {
      demo(a.phone).username = "";
      a.phone.runtime().cursor = null;
      await exec(a, "inputText", { text });
      got.push(demo(a.phone).username);
    }
    expect([got, a.phone.problems]).toEqual([NASTY, []]);
    expect(withoutDumps(ran(a.phone)).filter((c) => c !== TRAILER && (c[0] !== "input" || c[1] !== "text"))).toEqual(
      [],
    );
  });

  test("openUrl passes the URL as one argument when it holds shell metacharacters", async () => {
    await using a = await attach(adb.server());
    const url = "https://x.test/p?q=$(id)&b=`id`;c='\"\\|>d&&e";
    await exec(a, "openUrl", { url });
    expect([ran(a.phone), a.phone.apps.get("com.android.chrome")?.url, a.phone.problems]).toEqual([
      [["am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url], TRAILER],
      url,
      [],
    ]);
  });

  test("launch runs nothing more when the phone answers resolve-activity with shell syntax", async () => {
    await using a = await attach(adb.server());
    const errors = [];
    for (const component of [
      "com.android.settings/.Settings; reboot",
      "com.android.settings/.Settings$(reboot)",
      "com.android.settings/.Settings'",
      "-n com.evil/.Main",
    ]) {
      answer(
        a.phone,
        "cmd",
        `priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n${component}\n`,
      );
      errors.push(await driverError(exec(a, "launch", { packageName: "com.android.settings" })));
    }
    expect(errors).toEqual(Array(4).fill(platformError("android_app_launch_invalid_result", true)));
    expect([ran(a.phone).filter((c) => c !== TRAILER && c[0] !== "cmd"), a.phone.problems]).toEqual([[], []]);
  });

  test("launch, terminate and openUrl run nothing when their values break the patterns", async () => {
    await using a = await attach(adb.server());
    const calls: [string, unknown][] = [
      ["launch", { packageName: "com.example;reboot" }],
      ["launch", { packageName: "com.example$(id)" }],
      ["launch", { packageName: "com.ex'ample" }],
      ["terminate", { packageName: "com.example && reboot" }],
      ["terminate", { packageName: "com.example\nreboot" }],
      ["openUrl", { url: "https://x.test/\nreboot" }],
      ["openUrl", { url: "https://x.test/ $(id)" }],
      ["openUrl", { url: "-n com.evil/.Main" }],
    ];
    const errors = [];
    for (const [name, args] of calls) errors.push(await driverError(exec(a, name, args)));
    expect(errors).toEqual(calls.map(([name]) => invalidArguments(name)));
    expect([a.phone.commandLog, a.phone.serviceLog]).toEqual([[], []]);
  });
});

describeWithAdb("AndroidDriver.execute argument validation", () => {
  test("execute fails with invalid_arguments naming the action and runs nothing when arguments break the schema", async () => {
    await using a = await attach(adb.server());
    const calls: [string, unknown][] = [
      ["tap", { x: 1.5, y: 0 }],
      ["tap", { x: -1, y: 0 }],
      ["tap", { x: "1", y: 0 }],
      ["tap", { x: 1, y: 1, z: 1 }],
      ["tap", { x: 1 }],
      ["tap", null],
      ["tap", [1, 2]],
      ["tap", { x: 1080, y: 0 }],
      ["tap", { x: 0, y: 2400 }],
      ["tap", { x: 4294967296, y: 0 }],
      ["doubleTap", { x: 1, y: 1, count: 2 }],
      ["longPress", { x: 1, y: 1, durationMs: 0 }],
      ["longPress", { x: 1, y: 1, durationMs: 60001 }],
      ["longPress", { x: 2000, y: 1 }],
      ["swipe", { startX: 0, startY: 0, endX: 0, endY: 2400, durationMs: 100 }],
      ["swipe", { startX: 0, startY: 0, endX: 10, endY: 10 }],
      ["swipe", { startX: 0, startY: 0, endX: 10, endY: 10, durationMs: 0 }],
      ["scroll", { deltaX: 0, deltaY: 0 }],
      ["scroll", { deltaX: 0, deltaY: 100001 }],
      ["scroll", { deltaY: 10 }],
      ["keyPress", { key: "f1" }],
      ["keyPress", { key: "back" }],
      ["back", { now: true }],
      ["home", null],
      ["inputText", { text: "" }],
      ["inputText", { text: "a\u0000b" }],
      ["inputText", { text: "x".repeat(4097) }],
      ["inputText", { text: 5 }],
      ["launch", { packageName: "com" }],
      ["terminate", { packageName: "1abc.x" }],
      ["openUrl", { url: "not a url" }],
      ["rotate", { orientation: "sideways" }],
      ["inputSecret", { secret: "" }],
    ];
    const errors = [];
    for (const [name, args] of calls) errors.push(await driverError(exec(a, name, args)));
    expect(errors).toEqual(calls.map(([name]) => invalidArguments(name)));
    expect([a.phone.commandLog, a.phone.serviceLog]).toEqual([[], []]);
  });

  test("inputText accepts the text when it has 4096 code points but more UTF-16 units", async () => {
    await using a = await attach(adb.server(), { clipboardShell: true });
    await focusUsername(a);
    const text = "👋".repeat(4096);
    expect((await exec(a, "inputText", { text })).output).toEqual({
      accepted: true,
      byteLength: 4 * 4096,
      via: "clipboard",
    });
    expect([demo(a.phone).username === text, a.phone.problems]).toEqual([true, []]);
  });
});

describeWithAdb("AndroidDriver.elements", () => {
  test("tapPoint taps the point and focuses the field when one is under it", async () => {
    await using a = await attach(adb.server());
    await a.driver.elements.tapPoint(a.id, { x: 540, y: 600 }, ctx());
    expect([ran(a.phone), a.phone.runtime().focusedField]).toEqual([
      [["input", "tap", "540", "600"], TRAILER],
      "password",
    ]);
  });

  test("clearFocused moves to the end and deletes the hinted length plus four, or 64 when there is no hint", async () => {
    await using a = await attach(adb.server());
    await focusUsername(a);
    demo(a.phone).username = "hello";
    a.phone.runtime().cursor = 0;
    await a.driver.elements.clearFocused(a.id, ctx(), { length: 5 });
    expect([ran(a.phone), demo(a.phone).username]).toEqual([
      [["input", "keyevent", "123"], ["input", "keyevent", ...Array(9).fill("67")], TRAILER],
      "",
    ]);
    a.phone.commandLog.length = 0;
    demo(a.phone).username = "x".repeat(60);
    await a.driver.elements.clearFocused(a.id, ctx());
    expect([ran(a.phone), demo(a.phone).username]).toEqual([
      [["input", "keyevent", "123"], ["input", "keyevent", ...Array(64).fill("67")], TRAILER],
      "",
    ]);
  });

  test("typeText types like inputText when not secret, and only through the stdin script when secret", async () => {
    await using a = await attach(adb.server(), { clipboardShell: true });
    await focusUsername(a);
    await a.driver.elements.typeText(a.id, "héllo", { secret: false }, ctx());
    expect([withoutDumps(ran(a.phone)), demo(a.phone).username]).toEqual([
      [
        ["cmd", "clipboard", "set", "text", ""],
        TRAILER,
        ["input", "text", "h"],
        ["cmd", "clipboard", "set", "text", "é"],
        ["input", "keyevent", "279"],
        ["input", "text", "llo"],
        TRAILER,
      ],
      "héllo",
    ]);
    await a.driver.elements.tapPoint(a.id, { x: 540, y: 600 }, ctx());
    a.phone.serviceLog.length = 0;
    await a.driver.elements.typeText(a.id, "pw 1", { secret: true }, ctx());
    expect([
      a.phone.serviceLog
        .filter((s) => !s.command.includes("uiautomator dump"))
        .map((s) => [s.kind, s.command, s.stdin]),
      demo(a.phone).password,
    ]).toEqual([
      [["shell", expect.stringMatching(/^IFS= read -r (\w+) && input text "\$\1"; echo "\n__\w+\$\?"$/), "pw 1\n"]],
      "pw 1",
    ]);
  });
});
