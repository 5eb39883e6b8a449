/** Screen commands of the simulated phone: wm, screencap, uiautomator and input. */
import { type CommandFn, type CommandIo, delay, hang } from "./command-io.ts";
import { uiAutomationHolder } from "./commands-process.ts";
import { unsupported } from "./commands-shell.ts";
import { blackPng, INVALID_DISPLAY_ID, MULTI_DISPLAY_WARNING } from "./displays.ts";
import type { FakePhone } from "./fake-phone.ts";
import { inputCommand } from "./input-command.ts";
import { normalizePath } from "./phone-files.ts";
import { compressTree, toUiautomatorXml, withOddNodes } from "./uiautomator-xml.ts";

export const IDLE_STATE_ERROR = "ERROR: could not get idle state.";
export const NULL_ROOT_ERROR = "ERROR: null root node returned by UiTestAutomationBridge.";
export const DEFAULT_DUMP_FILE = "/sdcard/window_dump.xml";

/**
 * What connecting UiAutomation throws while another client has the bridge registered: the
 * exception line and the framework frames as bytedance/Fastbot_Android#230 quotes them (Android
 * 10-era line numbers; #46, #266, xiaocong/uiautomator#218 and appium/appium-uiautomator2-server#436
 * show the same exception). The frames below UiAutomation.connect are the caller's, which for
 * `uiautomator dump` no public source quotes, so they are left out. `hex` is the proxy's identity hash.
 */
export const alreadyRegistered = (hex: string) =>
  [
    `java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@${hex}already registered!`,
    "\tat android.os.Parcel.createException(Parcel.java:1961)",
    "\tat android.os.Parcel.readException(Parcel.java:1921)",
    "\tat android.os.Parcel.readException(Parcel.java:1871)",
    "\tat android.view.accessibility.IAccessibilityManager$Stub$Proxy.registerUiTestAutomationService(IAccessibilityManager.java:409)",
    "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked(UiAutomationConnection.java:399)",
    "\tat android.app.UiAutomationConnection.connect(UiAutomationConnection.java:97)",
    "\tat android.app.UiAutomation.connect(UiAutomation.java:238)",
    "\tat android.app.UiAutomation.connect(UiAutomation.java:214)",
    "",
  ].join("\n");

/**
 * KXmlSerializer's refusal of a character ("android-changed: refuse to output invalid
 * characters"), with the serializer's frames as quoted: `U+0` from mobile-dev-inc/Maestro#288
 * (a real device, com.android.org.kxml2), `d83d` from openatx/uiautomator2#135 and #506
 * (org.kxml2). The issues show the frames of those tools' own dumpers below these; the frames of
 * `uiautomator dump` itself are not quoted anywhere we found, so they are left out.
 */
export const ILLEGAL_CHARACTER: Readonly<Record<"U+0" | "d83d", string>> = {
  "U+0": [
    "java.lang.IllegalArgumentException: Illegal character (U+0)",
    "\tat com.android.org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:182)",
    "\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:173)",
    "\tat com.android.org.kxml2.io.KXmlSerializer.attribute(KXmlSerializer.java:495)",
    "",
  ].join("\n"),
  d83d: [
    "java.lang.IllegalArgumentException: Illegal character (d83d)",
    "\tat org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:144)",
    "\tat org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:130)",
    "\tat org.kxml2.io.KXmlSerializer.attribute(KXmlSerializer.java:465)",
    "",
  ].join("\n"),
};

export function screenCommands(phone: FakePhone): [string, CommandFn][] {
  const wm: CommandFn = (argv, io) => {
    const [, what, value] = argv;
    if (what === "size") {
      if (value === undefined) {
        const { width, height } = phone.physical;
        const o = phone.sizeOverride;
        io.out(`Physical size: ${width}x${height}\n${o ? `Override size: ${o.width}x${o.height}\n` : ""}`);
      } else if (value === "reset") phone.sizeOverride = null;
      else {
        const m = /^(\d+)x(\d+)$/.exec(value);
        if (!m) return unsupported(phone, argv, io);
        phone.sizeOverride = { width: Number(m[1]), height: Number(m[2]) };
      }
      return 0;
    }
    if (what === "density") {
      if (value === undefined) {
        const o = phone.densityOverride;
        io.out(`Physical density: ${phone.physical.density}\n${o ? `Override density: ${o}\n` : ""}`);
      } else if (value === "reset") phone.densityOverride = null;
      else if (/^\d+$/.test(value)) phone.densityOverride = Number(value);
      else return unsupported(phone, argv, io);
      return 0;
    }
    return unsupported(phone, argv, io);
  };

  const screencap: CommandFn = async (argv, io) => {
    const args = argv.slice(1);
    let png = false;
    let file: string | undefined;
    let displayId: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === "-p") png = true;
      else if (a === "-d") displayId = args[++i] ?? "";
      else if (a.startsWith("-")) return unsupported(phone, argv, io);
      else file = a;
    }
    if (file?.endsWith(".png")) png = true;
    if (!png) return unsupported(phone, argv, io); // the raw RGBA format is not simulated
    // screencap.cpp parses -d with strtoull and refuses anything that is not all digits.
    if (displayId !== undefined && (!/^\d{1,20}$/.test(displayId) || BigInt(displayId) >= 2n ** 64n))
      return (io.err(INVALID_DISPLAY_ID), 1);
    const display =
      displayId === undefined ? phone.displays[0] : phone.displays.find((d) => d.physicalId === displayId);
    if (!display) return unsupported(phone, argv, io); // a well-formed id of no display: its failure text is not simulated
    // Android 14's screencap captures the first physical display (physicalDisplays.front()) when none is named, and says so on stderr.
    if (
      displayId === undefined &&
      phone.displays.length > 1 &&
      Number(phone.props.get("ro.build.version.sdk") ?? 29) >= 34
    )
      io.err(MULTI_DISPLAY_WARNING);
    if (phone.faults.screencapHang) {
      await hang(io.signal);
      return 130;
    }
    const image = display.on ? phone.screenshot() : blackPng(display);
    if (file) phone.files.put(file, image);
    else io.out(image);
    return 0;
  };

  const uiautomator: CommandFn = async (argv, io) => {
    if (argv[1] !== "dump") return unsupported(phone, argv, io);
    const compressed = argv.includes("--compressed");
    const rest = argv.slice(2).filter((a) => a !== "--compressed" && a !== "--verbose");
    if (rest.length > 1) return unsupported(phone, argv, io);
    // UiAutomation is single-tenant: connecting fails while another client (another tool, or a
    // dump still running after its adb stream was closed) has it registered. The exit status of
    // the uncaught exception is not quoted in any source; 1 is this fake's choice.
    const holder = uiAutomationHolder(phone);
    const registered = phone.uiAutomationPid !== null && phone.processes.running.has(phone.uiAutomationPid);
    if (holder || registered) {
      io.err(alreadyRegistered((((io.pid ?? 0) * 2654435761) >>> 0).toString(16).slice(0, 7)));
      return 1;
    }
    const me = io.pid ?? -1;
    phone.uiAutomationPid = me;
    try {
      if (phone.faults.uiautomatorHang) {
        await hang(io.signal);
        return 130;
      }
      // Both failures are printed to stderr and the command still exits 0, as DumpCommand just returns.
      if (phone.faults.uiautomatorAnimating && !compressed) {
        // waitForIdle(1000, 1000 * 10) runs out while the app animates.
        await delay(phone.uiautomatorIdleTimeoutMs, io.signal);
        if (io.signal.aborted) return 130;
        io.err(`${IDLE_STATE_ERROR}\n`);
        return 0;
      }
      if (phone.faults.uiautomatorIdleErrors > 0) {
        phone.faults.uiautomatorIdleErrors--;
        io.err(`${IDLE_STATE_ERROR}\n`);
        return 0;
      }
      if (phone.faults.uiautomatorNullRoot > 0) {
        phone.faults.uiautomatorNullRoot--;
        io.err(`${NULL_ROOT_ERROR}\n`);
        return 0;
      }
      const illegal = phone.faults.uiautomatorIllegalChar;
      if (illegal) {
        io.err(ILLEGAL_CHARACTER[illegal]);
        return 1;
      }
      const tree = compressed ? compressTree(phone.tree()) : phone.tree();
      let xml = toUiautomatorXml(tree);
      if (phone.faults.uiautomatorOddNodes) xml = withOddNodes(xml, tree);
      // The message prints File.getAbsolutePath(); relative names resolve against adbd's `/`.
      const target =
        rest[0] === undefined ? DEFAULT_DUMP_FILE : rest[0] === "/dev/tty" ? "/dev/tty" : normalizePath(rest[0]);
      // With /dev/tty the XML reaches the terminal with no newline before the message.
      if (target === "/dev/tty") io.out(xml);
      else phone.files.put(target, xml);
      io.out(`UI hierchary dumped to: ${target}\n`);
      return 0;
    } finally {
      if (phone.uiAutomationPid === me) phone.uiAutomationPid = null;
    }
  };

  const input: CommandFn = (argv, io: CommandIo) => inputCommand(phone, argv, io);

  return [
    ["wm", wm],
    ["screencap", screencap],
    ["uiautomator", uiautomator],
    ["input", input],
  ];
}
