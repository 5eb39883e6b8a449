import type { ActionDefinition } from "../../src/protocol/types/action.ts";

const S = "https://json-schema.org/draft/2020-12/schema";
const U32 = { type: "integer", minimum: 0, maximum: 4294967295 } as const;
const BUNDLE = { type: "string", minLength: 1, maxLength: 255, pattern: "^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$" } as const;
const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ $schema: S, type: "object", additionalProperties: false, required, properties });

export const KEYS = { enter: 40, escape: 41, delete: 42, tab: 43, space: 44, arrowRight: 79, arrowLeft: 80, arrowDown: 81, arrowUp: 82 } as const;
export const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\u0000-\u001f\u007f]{1,4096}$/;

/** What every backend can do: simctl alone. */
export const SIMCTL_ACTIONS: ActionDefinition[] = [
  { name: "launch", description: "Launch an installed app by bundle id", inputSchema: obj({ bundleId: BUNDLE }) },
  { name: "terminate", description: "Terminate a running app by bundle id", inputSchema: obj({ bundleId: BUNDLE }) },
  { name: "openUrl", description: "Open a URL or deep link in the simulator", inputSchema: obj({ url: { type: "string", minLength: 3, maxLength: 4200, pattern: URL_PATTERN.source } }) },
  { name: "setAppearance", description: "Switch the simulator between light and dark appearance", inputSchema: obj({ appearance: { enum: ["light", "dark"] } }) },
];

/** What AXe adds: input at screenshot-pixel coordinates, keys, the home button, text. */
export const AXE_ACTIONS: ActionDefinition[] = [
  { name: "tap", description: "Tap one point in screenshot pixels", inputSchema: obj({ x: U32, y: U32 }) },
  { name: "doubleTap", description: "Tap one point twice in quick succession", inputSchema: obj({ x: U32, y: U32 }) },
  { name: "longPress", description: "Press and hold one point in screenshot pixels", inputSchema: obj({ x: U32, y: U32, durationMs: { type: "integer", minimum: 1, maximum: 60000 } }, ["x", "y"]) },
  {
    name: "swipe",
    description: "Swipe between two points in screenshot pixels",
    inputSchema: obj({ startX: U32, startY: U32, endX: U32, endY: U32, durationMs: { type: "integer", minimum: 1, maximum: 60000 } }),
  },
  { name: "scroll", description: "Scroll by a screenshot-pixel delta with a gesture centred on the screen", inputSchema: obj({ deltaX: { type: "integer", minimum: -100000, maximum: 100000 }, deltaY: { type: "integer", minimum: -100000, maximum: 100000 } }) },
  { name: "inputText", description: "Type text into the focused control: US-keyboard text through AXe, other text by pasting", inputSchema: obj({ text: { type: "string", minLength: 1, maxLength: 4096 } }) },
  { name: "keyPress", description: "Press one key", inputSchema: obj({ key: { enum: Object.keys(KEYS) } }) },
  { name: "home", description: "Press the Home button", inputSchema: { $schema: S, type: "object", additionalProperties: false, required: [], properties: {} } },
  ...SIMCTL_ACTIONS,
  {
    name: "inputSecret",
    description: "Type a protected value into the focused control; it travels only on stdin",
    inputSchema: obj({ secret: { type: "string", minLength: 1, maxLength: 1024 } }),
    protection: "protected",
  },
];
