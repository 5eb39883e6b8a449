/** Screen commands of the simulated phone: wm, screencap, uiautomator and input. */
import { type CommandFn, type CommandIo, hang } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import { blackPng, INVALID_DISPLAY_ID, MULTI_DISPLAY_WARNING } from "./displays.ts";
import type { FakePhone } from "./fake-phone.ts";
import { inputCommand } from "./input-command.ts";
import { normalizePath } from "./phone-files.ts";

export const IDLE_STATE_ERROR = "ERROR: could not get idle state.";
export const NULL_ROOT_ERROR = "ERROR: null root node returned by UiTestAutomationBridge.";
export const DEFAULT_DUMP_FILE = "/sdcard/window_dump.xml";

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
    if (displayId !== undefined && (!/^\d{1,20}$/.test(displayId) || BigInt(displayId) >= 2n ** 64n)) return (io.err(INVALID_DISPLAY_ID), 1);
    const display = displayId === undefined ? phone.displays[0] : phone.displays.find((d) => d.physicalId === displayId);
    if (!display) return unsupported(phone, argv, io); // a well-formed id of no display: its failure text is not simulated
    // Android 14's screencap captures the first physical display (physicalDisplays.front()) when none is named, and says so on stderr.
    if (displayId === undefined && phone.displays.length > 1 && Number(phone.props.get("ro.build.version.sdk") ?? 29) >= 34) io.err(MULTI_DISPLAY_WARNING);
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
    const rest = argv.slice(2).filter((a) => a !== "--compressed" && a !== "--verbose");
    if (rest.length > 1) return unsupported(phone, argv, io);
    if (phone.faults.uiautomatorHang) {
      await hang(io.signal);
      return 130;
    }
    // Both failures are printed to stderr and the command still exits 0, as DumpCommand just returns.
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
    const xml = phone.dumpXml();
    // The message prints File.getAbsolutePath(); relative names resolve against adbd's `/`.
    const target = rest[0] === undefined ? DEFAULT_DUMP_FILE : rest[0] === "/dev/tty" ? "/dev/tty" : normalizePath(rest[0]);
    // With /dev/tty the XML reaches the terminal with no newline before the message.
    if (target === "/dev/tty") io.out(xml);
    else phone.files.put(target, xml);
    io.out(`UI hierchary dumped to: ${target}\n`);
    return 0;
  };

  const input: CommandFn = (argv, io: CommandIo) => inputCommand(phone, argv, io);

  return [
    ["wm", wm],
    ["screencap", screencap],
    ["uiautomator", uiautomator],
    ["input", input],
  ];
}
