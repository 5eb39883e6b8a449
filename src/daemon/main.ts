#!/usr/bin/env bun
import { parseArgs } from "node:util";
import { serveStdio } from "../transports/stdio.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./log.ts";
import { createDaemon } from "./server.ts";
import { VERSION } from "./version.ts";

const HELP = `devicerail ${VERSION} — drive phones over DeviceRail protocol 1.5 (JSON-RPC 2.0)

Usage:
  devicerail serve [--stdio]   serve one client on stdin/stdout (NDJSON, the default)
  devicerail --version         print the version
  devicerail --help            print this help

Environment:
  DEVICERAIL_SCREENSHOT_POLICY  capture (default) | omit
  DEVICERAIL_LOG_LEVEL          trace | debug | info (default) | warn | error | silent

Logs are written to stderr; stdout carries protocol frames only.
Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage or configuration error.
`;

const SERVE_HELP = `Usage: devicerail serve [--stdio]

Serves one JSON-RPC connection on stdin/stdout: one JSON message per line (max 1 MiB).
Stops gracefully on end of input, SIGINT or SIGTERM (exit 0).
`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "V" }, stdio: { type: "boolean" } },
    });
  } catch (err) {
    process.stderr.write(`devicerail: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (!command && values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (command !== "serve" || positionals.length > 1) {
    process.stderr.write(command ? `devicerail: unknown command ${JSON.stringify(command)}\n\n${HELP}` : HELP);
    return 2;
  }
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`devicerail: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = await createLogger(config.logLevel);
  const daemon = createDaemon(config, log);
  log.info({ version: VERSION, transport: "stdio", screenshotPolicy: config.screenshotPolicy }, "devicerail serving");
  await serveStdio({ dispatcher: daemon.dispatcher, services: daemon.services, log });
  log.info({}, "devicerail stopped");
  return 0;
}

const code = await main(process.argv.slice(2));
process.exit(code);
