/** `devicerail mcp`: the daemon's MCP server on stdio, for hosts that spawn their MCP servers. */
import { bridgeStdio } from "../surfaces/mcp/stdio-bridge.ts";
import { checkConfig, dataDirOf } from "./client.ts";
import { attach } from "./daemon-control.ts";
import { stderr } from "./std-streams.ts";

export async function mcpCommand(env: Record<string, string | undefined> = process.env): Promise<number> {
  checkConfig(env);
  // The daemon of the data directory serves the MCP clients of every host process; started when none runs.
  const attached = await attach(dataDirOf(env), env, { start: true });
  void attached.client.close();
  // A person who runs it at a terminal learns what it is waiting for; a host's pipe sees nothing.
  if (process.stdin.isTTY)
    stderr.write(
      'devicerail mcp: an MCP server on stdin/stdout, for an AI agent host to start (e.g. `claude mcp add devicerail -- devicerail mcp`; see the README\'s "AI agents (MCP)"). Waiting for MCP messages; Ctrl-C quits.\n',
    );
  // The credential the endpoint was reached with: the data directory's token on its TCP port.
  return bridgeStdio(attached.endpoint, attached.token, (what) => stderr.write(`devicerail mcp: ${what}\n`));
}
