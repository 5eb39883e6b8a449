/**
 * What `input` prints on a phone whose ROM refuses input injection from the shell (Xiaomi MIUI /
 * HyperOS, OPPO ColorOS, realme, HONOR, until the vendor's developer option is set and the phone
 * rebooted). Every line below is quoted from a public report of a real phone; where a report
 * shows no stack for a subcommand, only the exception line is printed.
 */

/** Android 11 and older: the exception from `com.android.commands.input.Input` (an app_process program). */
export const LEGACY_DENIED =
  "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission";
/** Android 12 and later: InputShellCommand in system_server. */
export const DENIED =
  "java.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.";

/** `input keyevent …` on a Xiaomi M2006C3LI, Android 10 (DeviceFarmer/STFService.apk#144). */
const LEGACY_KEYEVENT_STACK = [
  "\tat android.os.Parcel.createException(Parcel.java:2075)",
  "\tat android.os.Parcel.readException(Parcel.java:2043)",
  "\tat android.os.Parcel.readException(Parcel.java:1991)",
  "\tat android.hardware.input.IInputManager$Stub$Proxy.injectInputEvent(IInputManager.java:925)",
  "\tat android.hardware.input.InputManager.injectInputEvent(InputManager.java:886)",
  "\tat com.android.commands.input.Input.injectKeyEvent(Input.java:386)",
  "\tat com.android.commands.input.Input.access$100(Input.java:41)",
  "\tat com.android.commands.input.Input$InputKeyEvent.sendKeyEvent(Input.java:204)",
  "\tat com.android.commands.input.Input$InputKeyEvent.run(Input.java:191)",
  "\tat com.android.commands.input.Input.onRun(Input.java:108)",
  "\tat com.android.internal.os.BaseCommand.run(BaseCommand.java:56)",
  "\tat com.android.commands.input.Input.main(Input.java:71)",
  "\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)",
  "\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:380)",
];

/** `adb shell input tap 568 1373` on a HONOR phone (badabing2005/PixelFlasher#137). */
const LEGACY_TAP_STACK = [
  "        at android.os.Parcel.createException(Unknown Source:36)",
  "        at android.os.Parcel.readException(Unknown Source:11)",
  "        at android.os.Parcel.readException(Unknown Source:10)",
  "        at android.hardware.input.IInputManager$Stub$Proxy.injectInputEvent(Unknown Source:61)",
  "        at android.hardware.input.InputManager.injectInputEvent(Unknown Source:21)",
  "        at com.android.commands.input.Input.injectMotionEvent(Input.java:428)",
  "        at com.android.commands.input.Input.access$200(Input.java:41)",
  "        at com.android.commands.input.Input$InputTap.sendTap(Input.java:224)",
  "        at com.android.commands.input.Input$InputTap.run(Input.java:218)",
  "        at com.android.commands.input.Input.onRun(Input.java:108)",
  "        at com.android.internal.os.BaseCommand.run(Unknown Source:24)",
  "        at com.android.commands.input.Input.main(Input.java:71)",
  "        at com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)",
  "        at com.android.internal.os.RuntimeInit.main(Unknown Source:24)",
];

/**
 * Both reports go on with this line; the remote frames after it are cut off in both, so they are
 * not printed.
 */
const LEGACY_CAUSE = "Caused by: android.os.RemoteException: Remote stack trace:";

/** `input swipe` on Android 13+ (droidrun/mobilerun-portal#5); the report is cut off after these frames. */
const SWIPE_STACK = [
  "\tat com.android.server.input.InputManagerService.injectInputEventToTarget(InputManagerService.java:911)",
  "\tat android.hardware.input.InputManagerGlobal.injectInputEvent(InputManagerGlobal.java:1217)",
  "\tat android.hardware.input.InputManagerGlobal.injectInputEvent(InputManagerGlobal.java:1227)",
  "\tat com.android.server.input.InputShellCommand.injectMotionEvent(InputShellCommand.java:196)",
  "\tat com.android.server.input.InputShellCommand.sendSwipe(InputShellCommand.java:430)",
  "\tat com.android.server.input.InputShellCommand.runSwipe(InputShellCommand.java:414)",
  "\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:257)",
  "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)",
  "\tat android.os.ShellCommand.exec(ShellCommand.java:38)",
  "\tat com.android.server.input.InputManagerService.onShellCommand(InputManagerService.java:3449)",
  "\tat android.os.Binder.shellCommand(Binder.java:1075)",
  "\tat android.os.Binder.onTransact(Binder.java:895)",
  "\tat android.hardware.input.IInputManager$Stub.onTransact(IInputManager.java:1372)",
];

/** `input tap 500 500` from Termux on Android 13+ (termux/termux-app#3583); cut off after these frames. */
const TAP_STACK = [
  "        at com.android.server.input.InputManagerService.injectInputEventToTarget(InputManagerService.java:900)",
  "        at android.hardware.input.InputManager.injectInputEvent(InputManager.java:1163)",
  "        at android.hardware.input.InputManager.injectInputEvent(InputManager.java:1192)",
  "        at com.android.server.input.InputShellCommand.injectMotionEvent(InputShellCommand.java:181)",
  "        at com.android.server.input.InputShellCommand.sendTap(InputShellCommand.java:382)",
  "        at com.android.server.input.InputShellCommand.runTap(InputShellCommand.java:376)",
  "        at com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:235)",
  "        at com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)",
  "        at android.os.ShellCommand.exec(ShellCommand.java:38)",
];

/**
 * The stderr text and exit status of a refused `input <command> …` on an Android of `sdk`.
 *
 * Exit status: on Android 11 and older the exception ends in BaseCommand.run (it is in every
 * frame list above), which prints the stack and calls `System.exit(1)` (the framework's
 * BaseCommand, decompiled, in the public code index id 4917261366). On 12 and later the
 * shell-command handler prints the header and the stack and the command exits 255 (AOSP
 * BasicShellCommandHandler; the research note §2.4 — no quoted report shows the status).
 * Termux's report shows the blank line before the header.
 */
export function refusedInput(command: string, sdk: number): { err: string; status: number } {
  if (sdk <= 30) {
    const stack = command === "keyevent" ? LEGACY_KEYEVENT_STACK : command === "tap" ? LEGACY_TAP_STACK : null;
    return { err: `${[LEGACY_DENIED, ...(stack ? [...stack, LEGACY_CAUSE] : [])].join("\n")}\n`, status: 1 };
  }
  const stack = command === "swipe" ? SWIPE_STACK : command === "tap" ? TAP_STACK : [];
  return { err: `\nException occurred while executing '${command}':\n${[DENIED, ...stack].join("\n")}\n`, status: 255 };
}
