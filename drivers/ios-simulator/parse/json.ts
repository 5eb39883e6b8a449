/** Parses a tool's JSON output; not JSON at all is the error `notJson` makes, naming the tool. */
export function parseToolJson(text: string, notJson: () => Error): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw notJson();
  }
}
