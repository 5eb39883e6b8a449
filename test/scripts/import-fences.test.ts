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
    expect(violations("src/server/x.ts", 'import { d } from "../../drivers/mock/mock-driver.ts";')).toHaveLength(1);
    expect(violations("src/server/x.ts", 'import { d } from "../../drivers/mock/index.ts";')).toEqual([]);
    // The helper APKs are embedded by one file only, and only files under a package's apks/.
    const APK = '"../../../node_modules/io.appium.settings/apks/settings_apk-debug.apk" with { type: "file" }';
    expect(violations("drivers/android/helper/apks.ts", `import p from ${APK};`)).toEqual([]);
    expect(violations("drivers/android/helper/other.ts", `import p from ${APK};`)).toHaveLength(1);
    expect(
      violations(
        "drivers/android/helper/apks.ts",
        'import p from "../../../node_modules/io.appium.settings/build/lib/index.js";',
      ),
    ).toHaveLength(1);
    expect(violations("src/cli/android-helper.ts", 'import { h } from "../../drivers/android/index.ts";')).toEqual([]);
    expect(
      violations("src/cli/devices-command.ts", 'import { h } from "../../drivers/android/index.ts";'),
    ).toHaveLength(1);
  });

  test("the report's browser code imports only its own folder, and only types of the report model and the protocol", () => {
    const B = "src/surfaces/report/browser/x.ts";
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
    expect(violations("src/surfaces/report/page.ts", 'import { model } from "./browser/data.ts";')).toHaveLength(1);
  });

  test("the interaction toolkit imports only the protocol, and the CLI and MCP share code only through it", () => {
    const I = "src/surfaces/interaction/x.ts";
    expect(violations(I, 'import { v } from "../../protocol/ui-geometry.ts";')).toEqual([]);
    expect(violations(I, 'import { s } from "../../core/devices/semantic/index.ts";')).toEqual([
      `${I}: imports ../../core/devices/semantic/index.ts (src/surfaces/interaction may import src/protocol only)`,
    ]);
    expect(violations(I, 'import * as v from "valibot";')).toHaveLength(1);
    expect(violations(I, "const h = Bun.hash(x);")).toHaveLength(1);
    expect(violations("src/core/x.ts", 'import { r } from "../surfaces/interaction/refs.ts";')).toHaveLength(1);
    expect(violations("src/surfaces/mcp/x.ts", 'import { r } from "../../cli/refs.ts";')).toEqual([
      "src/surfaces/mcp/x.ts: imports ../../cli/refs.ts (a surface imports only src/protocol, src/client and src/surfaces/interaction (the server hands it the rest))",
    ]);
    expect(violations("src/cli/x.ts", 'import { t } from "../surfaces/mcp/tree-text.ts";')).toHaveLength(1);
    expect(violations("src/cli/mcp-command.ts", 'import { b } from "../surfaces/mcp/stdio-bridge.ts";')).toEqual([]);
    expect(violations("src/surfaces/mcp/x.ts", 'import { r } from "../interaction/index.ts";')).toEqual([]);
  });

  test("a surface imports only protocol, client and interaction, and no other surface", () => {
    const M = "src/surfaces/mcp/x.ts";
    expect(violations(M, 'import { hello } from "../../client/hello.ts";')).toEqual([]);
    expect(violations(M, 'import { httpError } from "../../protocol/http.ts";')).toEqual([]);
    expect(violations(M, 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";')).toEqual([]);
    expect(violations(M, 'import type { EvidenceSource } from "../http-api/http-api.ts";')).toEqual([
      `${M}: imports ../http-api/http-api.ts (a surface may not import another surface (what they share belongs in src/surfaces/interaction))`,
    ]);
    expect(violations("src/surfaces/report/x.ts", 'import { McpHub } from "../mcp/server.ts";')).toHaveLength(1);
    expect(violations(M, 'import { textStream } from "../../transports/text-stream.ts";')).toHaveLength(1);
    expect(violations(M, 'import { RpcError } from "../../rpc/rpc-error.ts";')).toHaveLength(1);
    expect(violations(M, 'import { VERSION } from "../../server/version.ts";')).toHaveLength(1);
    expect(violations(M, 'import { FarmHost } from "../../farm/host.ts";')).toHaveLength(1);
    expect(violations(M, 'import { MockDriver } from "../../../drivers/mock/index.ts";')).toHaveLength(2);
    expect(
      violations("src/surfaces/http-api/x.ts", 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";'),
    ).toHaveLength(2);
    expect(violations("src/surfaces/report/x.ts", 'import { z } from "zod";')).toHaveLength(1);
  });

  test("the farm reaches the daemon through its host port; the server is the only composition root", () => {
    const F = "src/farm/x.ts";
    expect(violations(F, 'import type { Connection } from "../rpc/connection.ts";')).toEqual([]);
    expect(violations(F, 'import { RpcError } from "../protocol/rpc-error.ts";')).toEqual([]);
    expect(violations(F, 'import { stateOf } from "../core/connection-state.ts";')).toHaveLength(1);
    expect(violations(F, 'import type { Daemon } from "../server/server.ts";')).toHaveLength(1);
    expect(violations(F, 'import { Dispatcher } from "../rpc/dispatcher.ts";')).toHaveLength(1);
    expect(violations(F, 'import { replacePrivateFile } from "../cli/private-file.ts";')).toHaveLength(1);
    expect(violations("src/server/x.ts", 'import { stateOf } from "../core/connection-state.ts";')).toEqual([]);
    expect(violations("src/server/x.ts", 'import { EXIT } from "../cli/output.ts";')).toHaveLength(1);
    expect(violations("src/cli/x.ts", 'import { createDaemon } from "../server/server.ts";')).toHaveLength(1);
    expect(violations("src/cli/x.ts", 'import { loadConfig } from "../server/config.ts";')).toEqual([]);
    expect(violations("src/cli/serve-command.ts", 'const s = await import("../server/serve.ts");')).toEqual([]);
    expect(violations("src/cli/x.ts", 'const s = await import("../server/serve.ts");')).toHaveLength(1);
    expect(violations("src/cli/x.ts", 'import { Dispatcher } from "../rpc/dispatcher.ts";')).toHaveLength(1);
    expect(violations("src/cli/x.ts", 'import { EventLog } from "../core/sessions/event-log.ts";')).toHaveLength(1);
    expect(violations("src/cli/x.ts", 'import { selectorMatcher } from "../core/devices/semantic/index.ts";')).toEqual(
      [],
    );
    expect(violations("src/cli/x.ts", 'import { MockDriver } from "../../drivers/mock/index.ts";')).toHaveLength(1);
    expect(
      violations("src/transports/x.ts", 'import { HttpApi } from "../surfaces/http-api/http-api.ts";'),
    ).toHaveLength(1);
  });

  test("only the CLI writes to a terminal", () => {
    expect(violations("src/cli/x.ts", 'process.stderr.write("devicerail: no\\n");')).toEqual([]);
    expect(violations("src/server/x.ts", 'process.stderr.write("devicerail: no\\n");')).toEqual([
      "src/server/x.ts: writes to stdout or stderr (only src/cli writes to a terminal; others take a sink or log)",
    ]);
    expect(violations("src/surfaces/mcp/x.ts", 'console.error("x");')).toHaveLength(1);
    expect(violations("drivers/android/x.ts", "process.stdout.write(x);")).toHaveLength(1);
    expect(violations("src/farm/x.ts", "// process.stderr.write is not used here")).toEqual([]);
    expect(violations("src/transports/stdio.ts", "const out = streamSink(process.stdout);")).toEqual([]);
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
    for (const surface of ["src/surfaces/http-api/http-api.ts", "src/surfaces/mcp/x.ts", "src/surfaces/report/x.ts"]) {
      const up = surface.split("/").length - 2;
      const src = "../".repeat(up);
      expect(violations(surface, `import type { Dispatcher } from "${src}rpc/dispatcher.ts";`)).toHaveLength(1);
      expect(violations(surface, `import { Connection } from "${src}rpc/connection.ts";`)).toHaveLength(1);
      expect(violations(surface, `import { createCore } from "${src}core/core.ts";`).length).toBeGreaterThan(0);
      expect(violations(surface, `import type { Connect } from "${src}client/in-process.ts";`)).toEqual([]);
    }
    expect(
      violations("src/server/local-connect.ts", 'import type { Dispatcher } from "../rpc/dispatcher.ts";'),
    ).toEqual([]);
  });
});
