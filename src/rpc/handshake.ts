import * as v from "valibot";
import { FEATURES, type FeatureName, SERVER_OFFER } from "../protocol/features.ts";
import { type IssueDetail, issueDetails } from "../protocol/issue-details.ts";
import {
  type HelloParams,
  HelloParamsSchema,
  type ProtocolOffer,
  type ProtocolVersion,
} from "../protocol/types/handshake.ts";
import { RpcError } from "../protocol/rpc-error.ts";

/** Runtime services that decide feature availability beyond the selected minor (docs/protocol/handshake.md#feature-availability). */
export interface ServerServices {
  /** Loopback WebSocket event listener accepting and this connection is stdio. */
  eventStreamListener: boolean;
  screenshotPolicy: "capture" | "omit";
  evidenceStore: boolean;
  /** The daemon implements media streams at all (media.stream.v1 also needs capture and evidence). */
  mediaStreams: boolean;
}

export interface Negotiated {
  selected: ProtocolVersion;
  enabled: FeatureName[];
  params: HelloParams;
}

type Version = readonly [number, number];
type OfferLike = { readonly ranges: readonly Readonly<ProtocolOffer["ranges"][number]>[] };
const cmp = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1];

/** Highest common (major, minor), or why there is none (docs/protocol/handshake.md#version-negotiation). Offers must already be validated. */
export function selectVersion(
  client: OfferLike,
  server: OfferLike,
): ProtocolVersion | "clientTooOld" | "serverTooOld" | "noCommonVersion" {
  let best: Version | null = null;
  for (const c of client.ranges)
    for (const s of server.ranges) {
      if (c.major !== s.major) continue;
      const hi = Math.min(c.maxMinor, s.maxMinor);
      if (Math.max(c.minMinor, s.minMinor) <= hi && (best === null || cmp([c.major, hi], best) > 0))
        best = [c.major, hi];
    }
  if (best) return { major: best[0], minor: best[1] };
  const lowest = (o: OfferLike) =>
    o.ranges.map((r): Version => [r.major, r.minMinor]).reduce((a, b) => (cmp(a, b) <= 0 ? a : b));
  const highest = (o: OfferLike) =>
    o.ranges.map((r): Version => [r.major, r.maxMinor]).reduce((a, b) => (cmp(a, b) >= 0 ? a : b));
  if (cmp(highest(client), lowest(server)) < 0) return "clientTooOld";
  if (cmp(lowest(client), highest(server)) > 0) return "serverTooOld";
  return "noCommonVersion";
}

export function availableFeatures(
  minor: number,
  services: ServerServices,
  offered: ReadonlySet<string>,
): FeatureName[] {
  return FEATURES.filter((f) => {
    if (minor < f.minor) return false;
    switch (f.condition) {
      case "always":
        return true;
      case "eventStreamListener":
        return services.eventStreamListener;
      case "captureAndEvidenceStore":
        return services.mediaStreams && services.screenshotPolicy === "capture" && services.evidenceStore;
      case "snapshotOffered":
        return offered.has("events.snapshot.v1");
      case "evidenceStore":
        return services.evidenceStore;
    }
  }).map((f) => f.name);
}

/**
 * system.hello processing steps 2–6 of docs/protocol/handshake.md#processing-order; throws the
 * RpcError the client gets. `positional` lists the field names when the params were sent as an
 * array, so that a refusal points at positions.
 */
export function negotiate(
  rawParams: unknown,
  services: ServerServices,
  serverOffer: OfferLike = SERVER_OFFER,
  positional?: readonly string[],
): Negotiated {
  const parsed = v.safeParse(HelloParamsSchema, rawParams);
  if (!parsed.success) {
    const issues = issueDetails(HelloParamsSchema, rawParams, parsed.issues, {
      redact: false,
      ...(positional ? { positional } : {}),
    });
    const [first] = issues as [IssueDetail];
    throw new RpcError("hello_invalid_params", {
      details: {
        method: "system.hello",
        pointer: first.pointer,
        expected: first.expected,
        received: first.received,
        issues,
      },
    });
  }
  const params = parsed.output;
  const offer = params.protocol;
  if (offer.ranges.length === 0)
    throw new RpcError("empty_protocol_offer", { details: { reason: "emptyProtocolOffer" } });
  if (offer.ranges.some((r) => r.minMinor > r.maxMinor))
    throw new RpcError("invalid_protocol_range", {
      details: { clientProtocol: offer, reason: "invalidProtocolRange" },
    });
  const selected = selectVersion(offer, serverOffer);
  if (typeof selected === "string")
    throw new RpcError("protocol_version_incompatible", {
      details: { clientProtocol: offer, reason: selected, serverProtocol: serverOffer },
    });
  const { required, optional } = params.features;
  const offered = new Set([...required, ...optional]);
  const available = availableFeatures(selected.minor, services, offered);
  const availableSet = new Set<string>(available);
  const unsupported = [...new Set(required.filter((f) => !availableSet.has(f)))].sort();
  if (unsupported.length > 0)
    throw new RpcError("required_feature_unsupported", {
      details: { available: [...available].sort(), unsupportedRequired: unsupported },
    });
  const enabled = available.filter((f) => offered.has(f)).sort();
  for (const f of FEATURES)
    if ("requires" in f && enabled.includes(f.name) && !enabled.includes(f.requires as FeatureName))
      throw new RpcError("feature_dependency_unsatisfied", {
        details: { feature: f.name, requiredFeature: f.requires },
      });
  return { selected, enabled, params };
}
