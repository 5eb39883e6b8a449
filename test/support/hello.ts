/** The feature names of docs/protocol/handshake.md#feature-availability, and the hello params tests send. */
export const ALL_FEATURES = [
  "events.snapshot.v1",
  "request.control.v1",
  "device.routing.v1",
  "action.protected.v1",
  "events.stream.v1",
  "media.stream.v1",
  "session.export.page.v1",
  "observation.uiSnapshot.v1",
  "device.semanticActions.v1",
  "verdict.record.v1",
];

export function helloParams(opts: { min?: number; max?: number; required?: string[]; optional?: string[] } = {}) {
  return {
    client: { name: "devicerail-tests", version: "1.0.0" },
    protocol: { ranges: [{ major: 1, minMinor: opts.min ?? 0, maxMinor: opts.max ?? 5 }] },
    features: { required: opts.required ?? [], optional: opts.optional ?? ALL_FEATURES },
  };
}
