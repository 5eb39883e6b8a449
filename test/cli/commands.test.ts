import { describe, expect, test } from "bun:test";
import { keyRequest, pickAction, swipeRequest, tapRequest } from "../../src/cli/actions.ts";
import { formatTree } from "../../src/cli/device-commands.ts";
import { deviceRow } from "../../src/cli/devices-command.ts";
import { stateFix } from "../../src/cli/doctor-checks.ts";
import { percentile } from "../../src/cli/doctor.ts";
import { colourEnabled, style, table, withSpinner } from "../../src/cli/output.ts";
import { assetRefsIn } from "../../src/protocol/types/evidence.ts";
import type { UiNode } from "../../src/protocol/types/ui.ts";

const plain = style(false);
const def = (name: string) => ({ name, description: name, inputSchema: { type: "object" } });

describe("pickAction", () => {
  test("uses the device's own action name and arguments when it has the action", () => {
    expect(pickAction(tapRequest(1, 2), [def("tap")], "mock-1")).toEqual({ name: "tap", arguments: { x: 1, y: 2 } });
    expect(pickAction(swipeRequest(1, 2, 3, 4, 300), [def("swipe")], "a")).toEqual({
      name: "swipe",
      arguments: { startX: 1, startY: 2, endX: 3, endY: 4, durationMs: 300 },
    });
  });

  test("maps a navigation key to its own action, else to keyPress", () => {
    expect(pickAction(keyRequest("back"), [def("keyPress"), def("back")], "a")).toEqual({
      name: "back",
      arguments: {},
    });
    expect(pickAction(keyRequest("back"), [def("keyPress")], "a")).toEqual({
      name: "keyPress",
      arguments: { key: "back" },
    });
    expect(pickAction(keyRequest("enter"), [def("keyPress"), def("back")], "a")).toEqual({
      name: "keyPress",
      arguments: { key: "enter" },
    });
  });

  test("names the device's actions when it lacks the one asked for", () => {
    expect(() => pickAction(keyRequest("enter"), [def("tap"), def("back")], "mock-1")).toThrow(
      "device mock-1 has no keyPress action (needed for key enter); its actions are: tap, back",
    );
  });
});

describe("deviceRow", () => {
  const android = { id: "android-adb:X", platform: { kind: "android" as const }, osVersion: null, connected: false };
  test("takes the adb state from an Android device's name, else connected or available", () => {
    expect(deviceRow({ ...android, name: "Android (X) (unauthorized)" }, null).state).toBe("unauthorized");
    expect(deviceRow({ ...android, name: "Pixel (no permissions)" }, null).state).toBe("no permissions");
    expect(deviceRow({ ...android, name: "Pixel 7" }, "s-1")).toEqual({
      ...android,
      name: "Pixel 7",
      state: "available",
      leasedBy: "s-1",
    });
    expect(deviceRow({ ...android, name: "Pixel 7", connected: true }, null).state).toBe("connected");
    expect(deviceRow({ ...android, platform: { kind: "mock" }, name: "x (offline)" }, null).state).toBe("available");
  });
});

describe("formatTree", () => {
  const node = (id: string, parent: string | null, extra: Partial<UiNode> = {}): UiNode => ({
    stableNodeId: id,
    parentStableNodeId: parent,
    role: "View",
    name: null,
    value: null,
    identifier: null,
    text: null,
    bounds: null,
    enabled: null,
    hittable: null,
    ...extra,
  });
  test("indents by depth, quotes text (else the name), and rounds bounds", () => {
    const nodes = [
      node("r", null, { role: "Window", bounds: { x: 0, y: 0, width: 100.4, height: 50.6 } }),
      node("a", "r", { role: "Button", text: 'say "hi"', name: "greet", identifier: "hi" }),
      node("b", "a", { role: "Image", name: "logo" }),
      node("c", "r"),
    ];
    expect(formatTree(nodes, plain)).toBe(
      'Window [0,0,100,51]\n  Button "say \\"hi\\"" #hi\n    Image "logo"\n  View\n',
    );
  });
});

describe("output", () => {
  test("table pads columns two spaces apart and trims line ends", () => {
    expect(
      table(
        ["A", "BB", "C"],
        [
          ["xxx", "y", ""],
          ["", "", "z"],
        ],
        plain,
      ),
    ).toBe("A    BB  C\nxxx  y\n         z\n");
  });

  test("colour needs a TTY or FORCE_COLOR, and NO_COLOR wins", () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
  });
});

test("percentile is nearest-rank to 0.1 ms", () => {
  const s = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10.04];
  expect([percentile(s, 50), percentile(s, 95), percentile([7.25], 95), percentile([], 50)]).toEqual([5, 10, 7.3, 0]);
});

test("assetRefsIn (export's evidence list) finds every canonical AssetRef once", () => {
  const sha = (c: string) => c.repeat(64);
  const ref = (c: string, mediaType: string) => ({ id: `sha256:${sha(c)}`, mediaType, uri: "u", sha256: sha(c) });
  const events = [
    {
      payload: {
        observation: { screenshot: ref("a", "image/png"), uiSnapshot: { evidence: ref("b", "application/json") } },
      },
    },
    { x: [ref("a", "image/png"), { sha256: sha("c") }] },
  ];
  expect([...assetRefsIn(events)]).toEqual([
    [sha("a"), "image/png"],
    [sha("b"), "application/json"],
  ]);
});

test("stateFix says what to do for each unusable adb state", () => {
  expect(stateFix("device")).toBeNull();
  expect(stateFix("unauthorized")).toContain("accept the USB debugging prompt on the phone");
  expect(stateFix("offline")).toBe("reconnect the cable or run `adb reconnect offline`");
  expect(stateFix("no permissions (user in plugdev group)")).toContain("udev rule");
  expect(stateFix("bootloader")).toBe("the phone is in bootloader mode: reboot the phone into Android");
});

describe("withSpinner", () => {
  test("draws on a TTY once the delay has passed, then clears its line", async () => {
    const written: string[] = [];
    let drawn: () => void = () => {};
    const firstFrame = new Promise<void>((r) => (drawn = r));
    const stream = { isTTY: true, write: (s: string) => (written.push(s), drawn()) };
    expect(await withSpinner("waiting", () => firstFrame.then(() => 42), { stream, delayMs: 0 })).toBe(42);
    expect(written[0]).toMatch(/^\r⠋ waiting \d+\.\d s\x1b\[K$/);
    expect(written.at(-1)).toBe("\r\x1b[K");
  });

  test("writes nothing when the stream is not a TTY, or when the work ends before the delay", async () => {
    const written: string[] = [];
    const write = (s: string) => written.push(s);
    expect(await withSpinner("x", async () => 1, { stream: { isTTY: false, write }, delayMs: 0 })).toBe(1);
    expect(await withSpinner("x", async () => 2, { stream: { isTTY: true, write } })).toBe(2);
    expect(written).toEqual([]);
  });
});
