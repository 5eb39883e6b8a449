#!/usr/bin/env bun
// The executable: `devicerail <command>` (commands in ./daemon/cli/, the daemon's composition root in
// ./daemon/server.ts). `--version` answers before commander or any command is loaded; every other
// command loads only its own module (./daemon/cli/program.ts).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const { VERSION } = await import("./daemon/version.ts");
  console.log(VERSION);
  process.exit(0);
}
const { runCli } = await import("./daemon/cli/program.ts");
process.exit(await runCli(argv));
export {};
