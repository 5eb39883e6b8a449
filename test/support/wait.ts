/**
 * Asks `probe` again as soon as each answer arrives, with no fixed delay in between, until `done`
 * accepts an answer, which it returns; fails naming `what` after `ms`. For state a daemon reports
 * only when asked: `probe` should wait for I/O (a request to the daemon), which paces the loop.
 * Between answers the event loop gets a turn, so a probe that answers from memory cannot starve
 * the sockets and timers that would change its answer.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T>,
  done: (answer: T) => boolean,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await probe();
    if (done(answer)) return answer;
    if (Date.now() > deadline)
      throw new Error(`${what} within ${ms} ms; last answer: ${JSON.stringify(answer)?.slice(0, 2_000)}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Polls `check` every 10 ms until it returns a truthy value; fails after `ms`. For asynchronous
 * conditions that announce no change (changes a driver reports into an array, a fake phone's logs,
 * processes in /proc): the interval keeps the wait from spinning, and what has an event or a
 * promise should await that instead.
 */
export async function until<T>(
  what: string,
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  ms = 5_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}
