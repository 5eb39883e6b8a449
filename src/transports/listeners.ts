// Listeners of any signature: each emitter (process, process.stdout) types its events its own way.
// biome-ignore lint/suspicious/noExplicitAny: the listener's arguments are the emitter's business
type Listener = (...args: any[]) => void;

/** Something that takes and drops listeners: process, process.stdout, a socket's emitter. */
interface Emitter {
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/**
 * Adds each listener, and returns the one call that removes them all again: a stdio loop keeps its
 * signal and stdout handlers exactly as long as its connection, whichever way it ends.
 */
export function listenWhile(listeners: [Emitter, string, Listener][]): () => void {
  for (const [target, event, listener] of listeners) target.on(event, listener);
  return () => {
    for (const [target, event, listener] of listeners) target.off(event, listener);
  };
}
