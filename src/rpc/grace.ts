/**
 * Waits for `work` at most `ms`: true when it settled in time, false when the grace ran out first.
 * Shutdown and close paths bound every wait this way, so a peer that never reads (or a handler
 * that never returns) cannot hold the daemon; the timer is cleared either way and never keeps
 * the process alive.
 */
export async function withinGrace(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    (timer as { unref?: () => void }).unref?.();
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
