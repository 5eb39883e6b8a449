/**
 * The Mock's action space, declared once: scripts/gen-protocol.ts writes the advertised documents
 * (src/protocol/generated/drivers/mock-actions.json, exactly the reference's, docs/protocol/devices-and-actions.md#the-mock-device) from these
 * valibot schemas, and execute validates calls with the same schemas.
 */
import * as v from "valibot";
import type { ActionContract } from "../../src/driver/action-space.ts";

/** Any JSON number: finite is all JSON can carry, so the document need not say it. */
const NUMBER = v.pipe(v.number(), v.finite());
const POSITION = v.pipe(v.number(), v.finite(), v.minValue(0));

// `protection` is left out for standard actions: on the wire it is written only when "protected"
// (docs/protocol/devices-and-actions.md#capabilities). inputSecret is not in the reference's Mock; it lets the protected-action path (hidden
// unless negotiated, redacted records, no screenshots) be exercised without a phone.
export const MOCK_CONTRACTS = [
  {
    name: "tap",
    description: "Tap a point in device coordinates",
    arguments: v.strictObject({ x: POSITION, y: POSITION }),
  },
  {
    name: "inputText",
    description: "Type text into the focused control",
    arguments: v.strictObject({ text: v.string() }),
  },
  {
    name: "scroll",
    description: "Scroll by a device-coordinate delta",
    arguments: v.strictObject({ deltaX: NUMBER, deltaY: NUMBER }),
  },
  { name: "back", description: "Go back one screen", arguments: v.strictObject({}) },
  {
    name: "inputSecret",
    description: "Type a protected printable-ASCII value into the focused control",
    arguments: v.strictObject({
      secret: v.pipe(v.string(), v.minLength(1), v.maxLength(1024), v.regex(/^[\u0020-\u007e]+$/)),
    }),
    protection: "protected",
  },
] as const satisfies readonly ActionContract[];

export type MockContract = (typeof MOCK_CONTRACTS)[number];
