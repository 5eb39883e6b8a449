import { describe, expect, test } from "bun:test";
import { checkImports, violations } from "../../scripts/check-imports.ts";

describe("import fences", () => {
  test("the source tree respects every import direction", () => {
    expect(checkImports()).toEqual([]);
  });

  test("a forbidden import is reported when a layer reaches upwards", () => {
    expect(violations("src/protocol/x.ts", 'import { a } from "../rpc/dispatcher.ts";')).toEqual([
      "src/protocol/x.ts: imports ../rpc/dispatcher.ts (src/protocol may not import other layers)",
    ]);
    expect(violations("src/rpc/x.ts", 'import pino from "pino";')).toHaveLength(1);
    expect(violations("src/rpc/x.ts", "const h = Bun.hash(x);")).toHaveLength(1);
    expect(violations("src/core/devices/x.ts", 'import { x } from "../../transports/stdio.ts";')).toHaveLength(1);
    expect(violations("src/core/devices/x.ts", 'import { Database } from "bun:sqlite";')).toHaveLength(1);
    expect(violations("src/core/sessions/x.ts", 'import { Database } from "bun:sqlite";')).toEqual([]);
    expect(violations("drivers/android/x.ts", 'import { y } from "../mock/y.ts";')).toHaveLength(1);
    expect(violations("src/daemon/x.ts", 'import { d } from "../../drivers/mock/mock-driver.ts";')).toHaveLength(1);
    expect(violations("src/daemon/x.ts", 'import { d } from "../../drivers/mock/index.ts";')).toEqual([]);
  });

  test("the report's browser code imports only its own folder, and only types of the report model and the protocol", () => {
    const B = "src/daemon/report/browser/x.ts";
    expect(violations(B, 'import { el } from "./dom.ts";')).toEqual([]);
    expect(violations(B, 'import type { ReportModel } from "../model-types.ts";')).toEqual([]);
    expect(violations(B, 'import type { TestEvent } from "../../../protocol/types/event.ts";')).toEqual([]);
    expect(violations(B, 'import { type TestEvent } from "../../../protocol/types/event.ts";')).toEqual([
      `${B}: imports ../../../protocol/types/event.ts (the report's browser code imports only types from outside its folder (\`import type\`))`,
    ]);
    expect(violations(B, 'import { MEDIA_TYPE_PNG } from "../../../protocol/types/evidence.ts";')).toHaveLength(1);
    // model.ts is the server's: even its types would bring node:os and Bun into the browser's check.
    expect(violations(B, 'import type { ReportModel } from "../model.ts";')).toHaveLength(1);
    expect(violations(B, 'import type { Step } from "../../cli/output.ts";')).toHaveLength(1);
    expect(violations(B, 'import * as v from "valibot";')).toHaveLength(1);
    expect(violations(B, 'const m = await import("../model-types.ts");')).toHaveLength(1);
    expect(violations(B, "const h = Bun.hash(x);")).toHaveLength(1);
    // The daemon gets the page's script only as its generated bundle.
    expect(violations("src/daemon/report/page.ts", 'import { model } from "./browser/data.ts";')).toHaveLength(1);
  });

  test("the interaction toolkit imports only the protocol, and the CLI and MCP share code only through it", () => {
    expect(violations("src/interaction/x.ts", 'import { v } from "../protocol/ui-geometry.ts";')).toEqual([]);
    expect(violations("src/interaction/x.ts", 'import { s } from "../core/devices/semantic/index.ts";')).toEqual([
      "src/interaction/x.ts: imports ../core/devices/semantic/index.ts (src/interaction may import src/protocol only)",
    ]);
    expect(violations("src/interaction/x.ts", 'import * as v from "valibot";')).toHaveLength(1);
    expect(violations("src/interaction/x.ts", "const h = Bun.hash(x);")).toHaveLength(1);
    expect(violations("src/core/x.ts", 'import { r } from "../interaction/refs.ts";')).toHaveLength(1);
    expect(violations("src/daemon/mcp/x.ts", 'import { r } from "../cli/refs.ts";')).toEqual([
      "src/daemon/mcp/x.ts: imports ../cli/refs.ts (MCP may not import the CLI (shared code belongs in src/interaction))",
    ]);
    expect(violations("src/daemon/cli/x.ts", 'import { t } from "../mcp/tree-text.ts";')).toHaveLength(1);
    expect(violations("src/daemon/cli/serve.ts", 'import { McpHub } from "../mcp/server.ts";')).toEqual([]);
    expect(violations("src/daemon/mcp/x.ts", 'import { r } from "../../interaction/index.ts";')).toEqual([]);
  });

  test("the client runs only its own folder, the framing and the small protocol modules; the daemon's surfaces reach the engine only through it", () => {
    const C = "src/client/x.ts";
    expect(violations(C, 'import type { InputOf } from "../protocol/methods.ts";')).toEqual([]);
    expect(violations(C, 'import { CONCURRENT_METHODS } from "../protocol/method-sets.ts";')).toEqual([]);
    expect(violations(C, 'import { LineSplitter } from "../rpc/ndjson.ts";')).toEqual([]);
    expect(violations(C, 'import type { Socket } from "bun";')).toEqual([]);
    expect(violations(C, 'import { METHODS } from "../protocol/methods.ts";')).toHaveLength(1);
    expect(violations(C, 'import type { Dispatcher } from "../rpc/dispatcher.ts";')).toHaveLength(1);
    expect(violations(C, 'import { x } from "../transports/tcp.ts";')).toHaveLength(1);
    expect(violations(C, 'import * as v from "valibot";')).toHaveLength(1);
    expect(violations("src/rpc/x.ts", 'import { c } from "../client/client.ts";')).toHaveLength(1);
    for (const surface of ["src/transports/http-api.ts", "src/daemon/mcp/x.ts", "src/daemon/report/x.ts"]) {
      const up = surface.split("/").length - 2;
      const src = "../".repeat(up);
      expect(violations(surface, `import type { Dispatcher } from "${src}rpc/dispatcher.ts";`)).toHaveLength(1);
      expect(violations(surface, `import { Connection } from "${src}rpc/connection.ts";`)).toHaveLength(1);
      expect(violations(surface, `import { createCore } from "${src}core/core.ts";`).length).toBeGreaterThan(0);
      expect(violations(surface, `import type { Connect } from "${src}client/in-process.ts";`)).toEqual([]);
    }
    expect(
      violations("src/daemon/local-connect.ts", 'import type { Dispatcher } from "../rpc/dispatcher.ts";'),
    ).toEqual([]);
  });
});
