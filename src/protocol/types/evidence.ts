import * as v from "valibot";
import { nullable } from "../ids.ts";

/** A reference to stored Evidence; canonical form is sha256-derived (docs/protocol/sessions-and-events.md#evidence). */
export const AssetRefSchema = v.object({
  id: v.string(),
  mediaType: v.string(),
  uri: v.string(),
  sha256: nullable(v.string()),
});
export type AssetRef = v.InferOutput<typeof AssetRefSchema>;

export const MEDIA_TYPE_PNG = "image/png";
export const MEDIA_TYPE_UI_TREE = "application/vnd.devicerail.ui-tree+json;version=1";

/**
 * Every canonical AssetRef anywhere in `value` (events, observations, UI trees, results, frames,
 * verdicts): sha256 → mediaType, in the order first named.
 */
export function assetRefsIn(value: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!x || typeof x !== "object") return;
    const o = x as Record<string, unknown>;
    if (
      typeof o.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(o.sha256) &&
      typeof o.mediaType === "string" &&
      typeof o.uri === "string" &&
      !found.has(o.sha256)
    )
      found.set(o.sha256, o.mediaType);
    for (const v of Object.values(o)) walk(v);
  };
  walk(value);
  return found;
}
