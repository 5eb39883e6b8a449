/**
 * Every environment variable devicerail reads, once: `devicerail --help` prints `help`, and
 * scripts/gen-readme.ts writes README.md's table from `doc` (its --check keeps them in step), so
 * the two never list different variables. config.ts checks the values.
 */
import table from "./environment.json" with { type: "json" };

export interface EnvironmentVariable {
  name: string;
  /** One line for --help. */
  help: string;
  /** The README's description (Markdown). */
  doc: string;
}

// The table is data, kept as such in ./environment.json (in the order --help and the README list it).
export const ENVIRONMENT: readonly EnvironmentVariable[] = table;

/** The --help section. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map((v) => v.name.length)) + 2;
  return ENVIRONMENT.map((v) => `  ${v.name.padEnd(width)}${v.help}`).join("\n");
}

/** README.md's table. */
export function environmentTable(): string {
  return ["| Variable | Values |", "| --- | --- |", ...ENVIRONMENT.map((v) => `| \`${v.name}\` | ${v.doc} |`)].join("\n");
}
