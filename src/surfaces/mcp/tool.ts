/**
 * One MCP tool as one module: `defineTool({ name, title, description, input, annotations, run })`
 * in `tools/<name>.ts`, listed once in `tools/index.ts`. McpHub lists the registry for tools/list
 * and looks a call's tool up in it; the input schema (valibot) both checks a call's arguments and
 * gives tools/list its JSON Schema.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import type { CallDeps } from "./tool-kit.ts";
import type { Lane } from "./lanes.ts";
import { ToolError, type ToolResult } from "./results.ts";

export interface ToolAnnotations {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
}

interface ToolBase<S extends v.GenericSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
}

/** A tool on one device: its arguments are checked, then it runs in the client's Session on `deviceId`. */
export interface DeviceTool<S extends v.GenericSchema = v.GenericSchema> extends ToolBase<S> {
  device: true;
  run(deps: CallDeps, lane: Lane, args: v.InferOutput<S>): Promise<ToolResult>;
}

/** A tool on no device (devices_list): it runs outside any Session and takes no arguments. */
export interface PlainTool<S extends v.GenericSchema = v.GenericSchema> extends ToolBase<S> {
  device: false;
  run(deps: CallDeps): Promise<ToolResult>;
}

export type Tool = DeviceTool | PlainTool;

export function defineTool<S extends v.GenericSchema>(tool: DeviceTool<S> | PlainTool<S>): Tool {
  return tool as unknown as Tool;
}

/** Validates a tool's arguments with its schema; the issues become one invalid_arguments error. */
export function parseArgs<S extends v.GenericSchema>(
  tool: { name: string; input: S },
  args: unknown,
): v.InferOutput<S> {
  const r = v.safeParse(tool.input, args ?? {});
  if (r.success) return r.output;
  const issues = r.issues
    .slice(0, 5)
    .map((i) => `${i.path?.map((p) => String(p.key)).join(".") || "arguments"}: ${i.message}`);
  throw new ToolError("invalid_arguments", `invalid arguments for ${tool.name}: ${issues.join("; ")}`, false, {
    tool: tool.name,
    issues,
  });
}

/** A tools/list entry. */
export function listEntry(t: Tool) {
  const schema = toJsonSchema(t.input, { errorMode: "ignore", typeMode: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  const a = t.annotations;
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: schema as { type: "object"; properties?: Record<string, object>; required?: string[] },
    annotations: {
      title: t.title,
      readOnlyHint: a.readOnly ?? false,
      destructiveHint: a.destructive ?? false,
      idempotentHint: a.idempotent ?? a.readOnly ?? false,
      openWorldHint: false,
    },
  };
}
