/**
 * The CLI and MCP model one screen the same way (issue 26, item 3): `devicerail ui` (the real CLI
 * process) and an MCP agent's listing give each element the same @eN, and an ambiguous selector
 * is resolved by the same rule on both.
 */
import { describe, expect, test } from "bun:test";
import { call, daemonReady, errorOf, httpPeer, ownerAuth, textOf } from "../support/mcp-client.ts";
import { tempDataDir } from "../support/daemon.ts";
import { cli, cliJson } from "./run.ts";

/** Ref → the element's label and id, from `devicerail ui` lines (`@e2   TextField "User name" #username [...]`). */
const cliRefs = (stdout: string) =>
  Object.fromEntries(
    stdout
      .split("\n")
      .flatMap((l) => (/^(@e\d+) +\S+ ("[^"]*") #(\S+) /.exec(l) ? [[RegExp.$1, `${RegExp.$2} ${RegExp.$3}`]] : [])),
  );

/** The same from MCP's model lines (`@e2 TextField "User name" id=username ... at=...`). */
const mcpRefs = (text: string) =>
  Object.fromEntries(
    text
      .split("\n")
      .flatMap((l) => (/^(@e\d+) \S+ ("[^"]*") id=(\S+) /.exec(l) ? [[RegExp.$1, `${RegExp.$2} ${RegExp.$3}`]] : [])),
  );

describe("the CLI and MCP on one screen", () => {
  test("give every element the same ref, and tap the only tappable one of an ambiguous selector alike", async () => {
    const env = { DEVICERAIL_DATA_DIR: tempDataDir(), DEVICERAIL_MOCK_DEVICES: "2" };
    const ui = await cli(["ui", "-d", "mock-1"], env);
    expect(ui.code).toBe(0);
    const byCli = cliRefs(ui.stdout);
    expect(byCli).toEqual({
      "@e1": '"Sign in" title',
      "@e2": '"User name" username',
      "@e3": '"Password" password',
      "@e4": '"Sign in" sign_in',
    });

    const dataDir = env.DEVICERAIL_DATA_DIR;
    await using peer = await httpPeer(await daemonReady(dataDir), dataDir, ownerAuth(dataDir));
    const tree = await call(peer, "ui_tree", { deviceId: "mock-2" });
    expect(mcpRefs(textOf(tree))).toEqual(byCli);

    // Before any input both "Sign in" elements are there and neither can be tapped: ambiguous on both.
    const sel = { text: { value: "Sign in" } };
    const cliBoth = await cli(["tap", "-d", "mock-1", "--text", "Sign in"], env);
    expect([cliBoth.code, cliBoth.stderr.split("\n")[0]]).toEqual([
      1,
      "devicerail: element_ambiguous: element selector matched more than one element",
    ]);
    expect(errorOf(await call(peer, "tap", { deviceId: "mock-2", selector: sel })).code).toBe("element_ambiguous");

    // With both fields filled the button is enabled: the title still matches, but only the button can be tapped.
    for (const [text, id] of [
      ["alice", "username"],
      ["hunter2", "password"],
    ]) {
      expect((await cli(["type", text as string, "--into", "-d", "mock-1", "--id", id as string], env)).code).toBe(0);
      expect(
        (await call(peer, "type_text", { deviceId: "mock-2", text, selector: { identifier: id } })).isError,
      ).toBeFalsy();
    }
    const byCliTap = await cliJson(["tap", "-d", "mock-1", "--text", "Sign in"], env);
    const byMcpTap = await call(peer, "tap", { deviceId: "mock-2", selector: sel });
    expect(byMcpTap.isError).toBeFalsy();
    const mcpElement = byMcpTap.structuredContent.actions[0].output.element;
    expect([byCliTap.output.element.stableNodeId, mcpElement.stableNodeId]).toEqual(["login/sign_in", "login/sign_in"]);
    expect(textOf(byMcpTap)).toContain(
      'note: 2 elements match selector {"text":{"value":"Sign in"}}; tapped the only one that can be tapped',
    );
  }, 60_000);
});
