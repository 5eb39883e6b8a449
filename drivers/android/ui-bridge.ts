/**
 * Who holds the phone's accessibility bridge. UiAutomation is single-tenant: while one client
 * has it registered every other `uiautomator dump` fails with "UiAutomationService …already
 * registered!" (bytedance/Fastbot_Android#46, #230, #266; xiaocong/uiautomator#218;
 * appium/appium-uiautomator2-server#436). The likely holder is found in `ps -A` by process name.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import type { AndroidShell } from "./android-shell.ts";
import type { PhoneCheck } from "./phone-checks.ts";

/**
 * Process names of known UiAutomation clients and the tool each belongs to. An instrumentation
 * runs in its target app's process, so the name is that package: Appium's
 * `io.appium.uiautomator2.server` (the process name in android/testing-samples#89's crash log),
 * uiautomator2/ATX's `com.github.uiautomator` (its instrumentation `com.github.uiautomator.test`
 * in xiaocong/uiautomator#261, the frames `com.github.uiautomator.stub` in openatx/uiautomator2#506),
 * Maestro's `dev.mobile.maestro` (the frames in mobile-dev-inc/Maestro#288), and
 * `com.android.commands.monkey` (monkey and Fastbot: the frames in Fastbot_Android#46, #230).
 * `uiautomator` is another `uiautomator` run (ours cut off, or another tool's); that a phone's
 * `ps` names it so (rather than `app_process`) is not verified.
 */
export const UI_AUTOMATION_CLIENTS: readonly { name: string; tool: string; app: boolean }[] = [
  { name: "io.appium.uiautomator2.server", tool: "Appium (UiAutomator2 driver)", app: true },
  { name: "com.github.uiautomator", tool: "uiautomator2 / ATX (weditor)", app: true },
  { name: "dev.mobile.maestro", tool: "Maestro", app: true },
  { name: "com.android.commands.monkey", tool: "monkey (or Fastbot)", app: false },
  { name: "uiautomator", tool: "another uiautomator run", app: false },
];

export interface Holder {
  name: string;
  tool: string;
  pid: number;
  /** What stops it from adb: an app process belongs to the app's user, so `kill` from the shell is refused. */
  stop: string;
}

/** The first known UiAutomation client in `ps -A` output (toybox: USER PID PPID VSZ RSS WCHAN ADDR S NAME). */
export function holderIn(ps: string): Holder | null {
  const running: { pid: number; name: string }[] = [];
  for (const line of ps.split("\n")) {
    const m = /^\S+\s+(\d+)\s+\d+\s.*\s(\S+)\s*$/.exec(line);
    if (m) running.push({ pid: Number(m[1]), name: m[2] as string });
  }
  for (const client of UI_AUTOMATION_CLIENTS) {
    const p = running.find((r) => r.name === client.name);
    if (p)
      return {
        name: client.name,
        tool: client.tool,
        pid: p.pid,
        stop: client.app ? `adb shell am force-stop ${client.name}` : `adb shell kill ${p.pid}`,
      };
  }
  return null;
}

const processRows = (ps: string) => ps.split("\n").filter((l) => /^\S+\s+\d+\s+\d+\s/.test(l)).length;

/**
 * Every process of the phone: `ps -A` (toybox, Android 8+). Android 7's toolbox `ps` lists all
 * processes by itself and does not know -A (renderdoc PR #896 met a `ps` that took it for a
 * pid), so when `ps -A` gives no process rows, plain `ps` is asked.
 */
export async function listProcesses(shell: AndroidShell, serial: string, ctx: CallContext): Promise<string> {
  const all = await shell.exec(serial, "ps -A", ctx);
  if (all.code === 0 && processRows(all.out) > 1) return all.out;
  const plain = await shell.exec(serial, "ps", ctx);
  if (plain.code !== 0) throw new Error(`ps exited ${plain.code}: ${plain.out.trim().slice(0, 200)}`);
  return plain.out;
}

/** Doctor: is another UiAutomation client running? Reads the process list only; never dumps (a dump would itself take the bridge). */
export async function checkUiAutomationBridge(
  shell: AndroidShell,
  serial: string,
  ctx: CallContext,
): Promise<PhoneCheck> {
  const name = "UI automation bridge";
  let ps: string;
  try {
    ps = await listProcesses(shell, serial, ctx);
  } catch (err) {
    return {
      name,
      status: "warn",
      detail: `could not list the phone's processes: ${(err as Error).message}`,
      fix: null,
    };
  }
  const holder = holderIn(ps);
  if (!holder) return { name, status: "ok", detail: "no other UiAutomation client is running", fix: null };
  return {
    name,
    status: "fail",
    detail: `${holder.tool} (process ${holder.name}, pid ${holder.pid}) holds the accessibility bridge: UI trees cannot be read while it runs`,
    fix: `stop ${holder.tool}, or run: ${holder.stop.replace("adb ", `adb -s ${serial} `)}`,
  };
}
