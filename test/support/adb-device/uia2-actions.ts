/**
 * W3C `POST /session/:id/actions` for one touch pointer, as the simulated UiAutomator2 server
 * understands it. Body shape: appium-uiautomator2-server model/api/actions/W3CActionsModel.java,
 * W3CItemModel.java (type, id, parameters.pointerType, actions) and W3CGestureModel.java (type,
 * duration, origin, x, y, button). Each press (pointerDown … pointerUp) becomes what the shell's
 * `input` would do for it: a short press in place is `input tap`, a longer one or a move is
 * `input swipe x1 y1 x2 y2 <held ms>` (how a shell long-presses). The gesture's duration is added
 * to the request's time (the real server answers once the events are injected). Several pointers
 * at once (multi-touch), key sources and element origins are not simulated.
 */
import { invalidArgument, missing, notSimulated, type Uia2Context, Uia2Error } from "./uia2-protocol.ts";

/** utils/w3c/ActionsParseException (an InvalidArgumentException with its own message), as ActionsPreprocessor words it. */
const parseError = (message: string) =>
  new Uia2Error(400, "invalid argument", message, "io.appium.uiautomator2.utils.w3c.ActionsParseException");
const POINTER_ITEM_TYPES = "[pointerMove, pointerUp, pointerDown, pointerCancel, pause]";

interface Item {
  type?: unknown;
  duration?: unknown;
  origin?: unknown;
  x?: unknown;
  y?: unknown;
}

interface Source {
  type?: unknown;
  id?: unknown;
  actions?: unknown;
}

const num = (v: unknown, fallback: number) => (typeof v === "number" && Number.isFinite(v) ? v : fallback);

export function performActions(
  ctx: Uia2Context,
  body: Record<string, unknown>,
  longPressMs: number,
  input: (args: string[]) => void,
): void {
  const sources = body.actions;
  // W3CActionsModel: `actions` is required, and each source needs type, id and actions.
  if (!Array.isArray(sources)) throw missing("W3CActionsModel", "actions");
  const pointers = (sources as Source[]).filter((src) => {
    for (const k of ["type", "id", "actions"] as const)
      if (src?.[k] === undefined || src[k] === null) throw missing("W3CItemModel", k);
    if (typeof src.type !== "string" || !Array.isArray(src.actions)) throw invalidArgument("malformed action source");
    if (!["pointer", "key", "none"].includes(src.type))
      throw parseError(
        `Only [pointer, key, none] values are supported for type key. '${src.type}' is passed instead for action '${src.id}'`,
      );
    if (src.type === "none") return false;
    if (src.type !== "pointer") throw notSimulated(`a '${src.type}' action source`);
    return (src.actions as Item[]).some((a) => a?.type === "pointerDown");
  });
  if (pointers.length > 1) throw notSimulated("a multi-touch gesture");
  const items = (pointers[0]?.actions ?? []) as Item[];
  const sourceId = String(pointers[0]?.id);
  let x = 0;
  let y = 0;
  let down: { x: number; y: number; at: number } | null = null;
  let elapsed = 0;
  for (const a of items) {
    if (typeof a?.type !== "string") throw missing("W3CGestureModel", "type");
    const duration = Math.max(0, num(a.duration, 0));
    switch (a.type) {
      case "pause":
        elapsed += duration;
        break;
      case "pointerMove": {
        const origin = a.origin ?? "viewport";
        if (origin !== "viewport" && origin !== "pointer") throw notSimulated("a pointer move relative to an element");
        const base = origin === "pointer" ? { x, y } : { x: 0, y: 0 };
        x = Math.trunc(base.x + num(a.x, 0));
        y = Math.trunc(base.y + num(a.y, 0));
        elapsed += duration;
        break;
      }
      case "pointerDown":
        down = { x, y, at: elapsed };
        break;
      case "pointerUp": {
        if (!down) break;
        const held = elapsed - down.at;
        if (down.x === x && down.y === y && held < longPressMs) input(["tap", String(x), String(y)]);
        else input(["swipe", ...[down.x, down.y, x, y].map(String), String(Math.trunc(held))]);
        down = null;
        break;
      }
      case "pointerCancel":
        down = null;
        break;
      default:
        throw parseError(
          `Only ${POINTER_ITEM_TYPES} item type values are supported for action type 'pointer'. ` +
            `'${a.type}' is passed instead for action '${sourceId}'`,
        );
    }
  }
  ctx.hold(elapsed);
}
