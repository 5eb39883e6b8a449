/**
 * The one hello every DeviceRail client of this repository sends (docs/protocol/handshake.md),
 * with the features each surface offers as a typed profile, so a misspelt feature fails to compile.
 */
import type { FeatureName } from "../protocol/features.ts";
import type { HelloParams, HelloResult } from "../protocol/types/handshake.ts";
import type { Client } from "./client.ts";

/** Reading Sessions, and acting on devices: what every profile but the report's builds on. */
const READ = ["device.routing.v1", "events.snapshot.v1", "session.export.page.v1"] as const;
const ACT = [...READ, "observation.uiSnapshot.v1", "device.semanticActions.v1"] as const;

export const PROFILES = {
  cli: [...ACT, "request.control.v1", "events.stream.v1", "verdict.record.v1", "action.protected.v1"],
  mcp: [...ACT, "action.protected.v1", "request.control.v1", "verdict.record.v1"],
  http: [...ACT, "action.protected.v1"],
  report: [...READ, "events.stream.v1"],
} as const satisfies Record<string, readonly FeatureName[]>;

export type Profile = keyof typeof PROFILES;

/** Who says hello: the client's name and version. */
export interface Peer {
  name: string;
  version: string;
}

/** The protocol range every client here offers: 1.5 only. */
const RANGES = [{ major: 1, minMinor: 5, maxMinor: 5 }];

/** system.hello's params: the profile's features optional, `required` ones (the event plane's) required. */
export function helloParams(
  peer: Peer,
  optional: readonly FeatureName[],
  required: readonly FeatureName[] = [],
): HelloParams {
  return {
    client: { name: peer.name, version: peer.version },
    protocol: { ranges: RANGES },
    features: { required: [...required], optional: [...optional] },
  };
}

/** Negotiates the connection with the profile's features. */
export function hello(client: Client, peer: Peer, profile: Profile): Promise<HelloResult> {
  return client.call("system.hello", helloParams(peer, PROFILES[profile]));
}
