/** `f` wrapped so that only its first call runs it: for releases that a finally and an abort handler may both call. */
export function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}
