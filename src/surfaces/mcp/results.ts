/**
 * Tool results as MCP wants them: text a model reads first, structured content for programs,
 * images as image content; errors as isError results with the typed code, a one-line reason and
 * whether trying again may help. No result may exceed 1 MB (Claude Desktop rejects larger ones).
 */
import type { RpcErrorObject } from "../../protocol/errors.ts";
import type { ModelImage } from "./image.ts";

export const MAX_RESULT_BYTES = 1_000_000;

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

export interface ToolResult {
  [key: string]: unknown;
  content: Content[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A failure a model can act on; thrown by tool code, turned into an isError result. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly details: Record<string, unknown> = {},
    /** Further lines for the model: the closest elements, the screen, what to do. */
    readonly lines: string[] = [],
  ) {
    super(message);
  }

  static fromRpc(error: RpcErrorObject, lines: string[] = []): ToolError {
    return new ToolError(
      error.data.code,
      error.message,
      error.data.retryable,
      (error.data.details ?? {}) as Record<string, unknown>,
      lines,
    );
  }
}

export function success(lines: string[], structured: Record<string, unknown>, image?: ModelImage): ToolResult {
  const content: Content[] = [{ type: "text", text: lines.join("\n") }];
  if (image)
    content.push({ type: "image", data: Buffer.from(image.data).toString("base64"), mimeType: image.mimeType });
  return capped({ content, structuredContent: structured });
}

/** Details longer than this are cut: they are for orientation, the code and reason carry the meaning. */
const DETAILS_CHARS = 2_000;

export function failure(e: ToolError): ToolResult {
  let details = JSON.stringify(e.details);
  if (details.length > DETAILS_CHARS) details = `${details.slice(0, DETAILS_CHARS)}…`;
  const text = [
    `${e.code}: ${e.message}`,
    `retryable: ${e.retryable}`,
    ...(details !== "{}" ? [`details: ${details}`] : []),
    ...e.lines,
  ].join("\n");
  return capped({
    isError: true,
    content: [{ type: "text", text }],
    structuredContent: { error: { code: e.code, message: e.message, retryable: e.retryable, details: e.details } },
  });
}

/**
 * The last guard of the 1 MB limit: images go first, then the text is cut. The settings keep
 * normal results far below it (an image of at most 400 KB, a listing of about 32 KB).
 */
export function capped(r: ToolResult): ToolResult {
  if (JSON.stringify(r).length <= MAX_RESULT_BYTES) return r;
  const note = "[the image was left out: this result would have exceeded 1 MB; lower DEVICERAIL_MCP_IMAGE_MAX_BYTES]";
  const content = r.content.filter((c) => c.type === "text").map((c) => ({ ...c }));
  content.push({ type: "text", text: note });
  const out: ToolResult = { ...r, content };
  for (const c of content) {
    const size = JSON.stringify(out).length;
    if (size <= MAX_RESULT_BYTES) break;
    if (c.type === "text" && c.text !== note)
      c.text = `${c.text.slice(0, Math.max(0, c.text.length - (size - MAX_RESULT_BYTES) - 200))}\n… cut to stay under 1 MB`;
  }
  return out;
}
