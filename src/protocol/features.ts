/** What a feature's availability depends on besides the selected minor (docs/protocol/handshake.md#feature-availability). */
export type FeatureCondition =
  | "always"
  | "eventStreamListener" // the loopback WebSocket listener is accepting (offered on stdio, TCP and Unix socket connections)
  | "captureAndEvidenceStore" // screenshot policy `capture` and a managed Evidence Store
  | "snapshotOffered" // the client offered events.snapshot.v1 in the same hello
  | "evidenceStore";

export interface FeatureSpec {
  readonly name: string;
  /** Protocol 1.x minor that introduces it; available only when the selected minor is at least this. */
  readonly minor: number;
  readonly condition: FeatureCondition;
  /** Must be enabled together with this feature, or the hello fails (feature_dependency_unsatisfied). */
  readonly requires?: string;
}

export const FEATURES = [
  { name: "events.snapshot.v1", minor: 0, condition: "always" },
  { name: "request.control.v1", minor: 1, condition: "always" },
  { name: "device.routing.v1", minor: 2, condition: "always" },
  { name: "action.protected.v1", minor: 2, condition: "always" },
  { name: "events.stream.v1", minor: 3, condition: "eventStreamListener" },
  { name: "media.stream.v1", minor: 4, condition: "captureAndEvidenceStore" },
  { name: "session.export.page.v1", minor: 4, condition: "snapshotOffered" },
  { name: "observation.uiSnapshot.v1", minor: 5, condition: "evidenceStore" },
  { name: "device.semanticActions.v1", minor: 5, condition: "evidenceStore", requires: "observation.uiSnapshot.v1" },
  { name: "verdict.record.v1", minor: 5, condition: "evidenceStore" },
] as const satisfies readonly FeatureSpec[];

export type FeatureName = (typeof FEATURES)[number]["name"];
export const FEATURE_NAMES: readonly FeatureName[] = FEATURES.map((f) => f.name);

export const PROTOCOL_MAJOR = 1;
export const PROTOCOL_MAX_MINOR = 5;

interface Offer {
  readonly ranges: readonly { readonly major: number; readonly minMinor: number; readonly maxMinor: number }[];
}
/** The range the control plane (stdio/TCP) offers. */
export const SERVER_OFFER: Offer = { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] };
/** The range the WebSocket event plane offers. */
export const WEBSOCKET_OFFER: Offer = { ranges: [{ major: 1, minMinor: 3, maxMinor: 5 }] };
