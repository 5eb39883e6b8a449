/**
 * Baseline for scripts/bench/rpc.ts: a bare Bun process that splits stdin into NDJSON lines and
 * writes each line back, with the same batching as the daemon's writer and none of its work.
 */
export {};

const out = Bun.stdout.writer({ highWaterMark: 1 << 16 });
let rest = new Uint8Array(0);
for await (const chunk of Bun.stdin.stream()) {
  const data = rest.length ? Buffer.concat([rest, chunk]) : chunk;
  let start = 0;
  for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
    out.write(data.subarray(start, nl + 1));
    start = nl + 1;
  }
  rest = data.slice(start);
  await out.flush();
}
await out.flush();
