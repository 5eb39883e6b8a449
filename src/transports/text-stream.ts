/**
 * An HTTP body written as `chunks` come: each is produced only when the client has read the one
 * before (a pull stream with no queue), so a slow reader holds back the reads behind it instead
 * of letting them pile up in memory. `finish` runs once, at the end, on an error or when the
 * client goes away.
 */
export function textStream(
  chunks: AsyncGenerator<string>,
  finish: () => Promise<void> | void = () => {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let finished = false;
  const end = async () => {
    if (finished) return;
    finished = true;
    await finish();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const next = await chunks.next();
            if (next.done) {
              controller.close();
              await end();
              return;
            }
            if (next.value.length) {
              controller.enqueue(encoder.encode(next.value));
              return;
            }
          }
        } catch (err) {
          controller.error(err);
          await end();
        }
      },
      async cancel() {
        await chunks.return(undefined);
        await end();
      },
    },
    { highWaterMark: 0 },
  );
}
