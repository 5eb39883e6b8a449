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
