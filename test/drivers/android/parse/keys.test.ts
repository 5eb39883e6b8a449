import { describe, expect, test } from "bun:test";
import { KEYCODES } from "../../../../drivers/android/parse/keys.ts";
import { keyCodeFromString } from "../../../support/adb-device/input-command.ts";

describe("KEYCODES", () => {
  test("holds Android's KeyEvent numbers when compared with the platform names", () => {
    const platform = {
      enter: "KEYCODE_ENTER",
      tab: "KEYCODE_TAB",
      escape: "KEYCODE_ESCAPE",
      delete: "KEYCODE_DEL",
      space: "KEYCODE_SPACE",
      arrowUp: "KEYCODE_DPAD_UP",
      arrowDown: "KEYCODE_DPAD_DOWN",
      arrowLeft: "KEYCODE_DPAD_LEFT",
      arrowRight: "KEYCODE_DPAD_RIGHT",
      back: "KEYCODE_BACK",
      home: "KEYCODE_HOME",
      appSwitch: "KEYCODE_APP_SWITCH",
      moveEnd: "KEYCODE_MOVE_END",
    } as const;
    // The simulated phone's table lacks PASTE; it is checked against KeyEvent.KEYCODE_PASTE below.
    const { paste, ...rest } = KEYCODES;
    expect({ rest, paste }).toEqual({
      rest: Object.fromEntries(Object.entries(platform).map(([k, v]) => [k, keyCodeFromString(v)])) as typeof rest,
      paste: 279,
    });
  });
});
