/** The system.hello line the benchmarks send first (id "hello", protocol 1.0–1.5, events.snapshot.v1), with its newline. */
export const HELLO_LINE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: "hello",
  method: "system.hello",
  params: {
    client: { name: "bench", version: "1" },
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    features: { optional: ["events.snapshot.v1"] },
  },
})}\n`;
