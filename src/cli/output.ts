/** Terminal output for people and machines: colour, tables, JSON, a spinner, and the CLI's errors. */
import { RemoteError } from "../client/remote-error.ts";
import { type ErrorName, type RpcErrorObject, errorObject, messageOf } from "../protocol/errors.ts";
import { describeError } from "./error-text.ts";
import { stdout, stderr } from "./std-streams.ts";

/**
 * The CLI's exit codes, the same for every command (README: CLI): 0 ok, 1 runtime failure, 2 usage
 * or configuration error, 3 no daemon running (`daemon status`), 130 interrupted (Ctrl-C).
 */
export const EXIT = { ok: 0, runtime: 1, usage: 2, notRunning: 3, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
type FailureExit = Exclude<ExitCode, 0>;

/** The error table's entry a CLI failure of each exit code is reported as in `--json`. */
const FAILURE_NAME: Record<FailureExit, ErrorName> = {
  [EXIT.runtime]: "cli_failed",
  [EXIT.usage]: "cli_usage",
  [EXIT.notRunning]: "cli_daemon_not_running",
  [EXIT.interrupted]: "cli_interrupted",
};

/** A failure the user can act on; the message says what to fix, the exit code what kind it is. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: FailureExit = EXIT.runtime,
    readonly details: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

/** The one exit-code mapping: what any failure a command throws exits with. */
export function exitCodeOf(e: unknown): FailureExit {
  return e instanceof CliError ? e.exitCode : EXIT.runtime;
}

/**
 * The one `--json` error shape: `{"error": {code, message, data: {code, message, retryable, details}}}`,
 * the JSON-RPC error object (docs/protocol/errors.md). A daemon's error is passed on as it came; the
 * CLI's own failures carry the error table's CLI codes (−32097: usage_error, command_failed, …).
 */
export function errorJson(e: unknown): RpcErrorObject {
  if (e instanceof RemoteError) return e.error;
  if (e instanceof CliError)
    return errorObject(FAILURE_NAME[e.exitCode], { message: e.message, details: e.details ?? undefined });
  return errorObject("cli_unexpected", { message: messageOf(e) });
}

/** Prints the `--json` error shape on stdout; `extra` adds fields beside code, message and data. */
export function printJsonError(e: unknown, extra: Record<string, unknown> = {}): void {
  printJson({ error: { ...errorJson(e), ...extra } });
}

/** DEVICERAIL_DEBUG set: the protocol's view of a daemon error (method, numeric code), for bug reports. */
export const debugLine = (e: RemoteError): string[] =>
  process.env.DEVICERAIL_DEBUG ? [`  (debug: ${e.method} answered JSON-RPC error ${e.code})`] : [];

type Env = Record<string, string | undefined>;

/**
 * Colour only for a person at a terminal: NO_COLOR (non-empty) always wins, FORCE_COLOR turns it on
 * without a TTY. picocolors is not used because it also colours whenever CI is set, which would put
 * escape codes into piped output.
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: Env = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
}

const sgr = (on: boolean, open: number, close: number) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);

export function style(on: boolean): Style {
  return {
    bold: sgr(on, 1, 22),
    dim: sgr(on, 2, 22),
    green: sgr(on, 32, 39),
    yellow: sgr(on, 33, 39),
    red: sgr(on, 31, 39),
    cyan: sgr(on, 36, 39),
  };
}

export const out = (): Style => style(colourEnabled(stdout));
export const err = (): Style => style(colourEnabled(stderr));

// SGR sequences take no columns; code points approximate the width of everything else.
const width = (s: string) => [...s.replace(/\x1b\[[0-9;]*m/g, "")].length;

/** Left-aligned columns two spaces apart, the header styled; trailing spaces trimmed. */
export function table(headers: string[], rows: string[][], st: Style = out()): string {
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - width(c))))
      .join("  ")
      .trimEnd();
  return `${[st.bold(line(headers)), ...rows.map(line)].join("\n")}\n`;
}

const CELL_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A cell's text on one line that moves nothing: line breaks, tabs and other control characters
 * (a verdict, a device name: anything a device or a client wrote) are shown as escapes, so they
 * can neither start a row nor a column of their own, nor send the terminal an escape sequence.
 */
export const cellText = (s: string) =>
  s.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => CELL_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** The rows as printRows writes them: an aligned table for a terminal (`tty`), else tab-separated values. */
export function rowsText(headers: string[], rows: string[][], tty: boolean): string {
  const cells = rows.map((r) => r.map(cellText));
  return tty ? table(headers, cells) : cells.map((r) => `${r.join("\t")}\n`).join("");
}

/**
 * Rows for a person at a terminal as an aligned table; on a pipe, tab-separated values without a
 * header or colour, one row a line, for `cut` and `awk` (--json is there for everything else).
 */
export function printRows(headers: string[], rows: string[][]): void {
  stdout.write(rowsText(headers, rows, stdout.isTTY === true));
}

export function printJson(value: unknown): void {
  stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints the failure (stderr for people; with --json also the error shape on stdout) and returns the exit code. */
export function reportFailure(e: unknown, json: boolean): number {
  const st = err();
  if (e instanceof RemoteError) {
    // What failed and what to fix (error-text.ts); the method and numeric code only for debugging.
    const [first, ...rest] = describeError(e.error);
    if (e.data.code === "device_not_found") rest.push("  list the devices with `devicerail devices`");
    stderr.write(`${st.red("devicerail:")} ${first}\n${[...rest, ...debugLine(e)].map((l) => `${l}\n`).join("")}`);
  } else if (e instanceof CliError) {
    stderr.write(`${st.red("devicerail:")} ${e.message}\n`);
  } else {
    // A bug or an environment this code did not expect: one readable line, the stack only on request.
    const message = messageOf(e);
    stderr.write(`${st.red("devicerail:")} unexpected error: ${message}\n`);
    if (process.env.DEVICERAIL_DEBUG && e instanceof Error && e.stack) stderr.write(`${e.stack}\n`);
    else stderr.write("  (set DEVICERAIL_DEBUG=1 for the stack trace; please report it)\n");
  }
  if (json) printJsonError(e);
  return exitCodeOf(e);
}

let spinning = false;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Runs `work`, showing a spinner on stderr once it has taken longer than a second, and only when
 * stderr is a terminal: stdout stays clean for pipes and --json.
 */
export async function withSpinner<T>(
  label: string,
  work: () => Promise<T>,
  opts: { stream?: { isTTY?: boolean; write(s: string): unknown }; delayMs?: number } = {},
): Promise<T> {
  const stream = opts.stream ?? stderr;
  // One spinner at a time: an inner wait (starting the daemon inside a smoke run) keeps the outer label.
  if (!stream.isTTY || spinning) return work();
  spinning = true;
  let frame = 0;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const started = performance.now();
  const draw = () =>
    stream.write(
      `\r${FRAMES[frame++ % FRAMES.length]} ${label} ${((performance.now() - started) / 1000).toFixed(1)} s\x1b[K`,
    );
  const delay = setTimeout(() => {
    draw();
    ticker = setInterval(draw, 80);
  }, opts.delayMs ?? 1_000);
  try {
    return await work();
  } finally {
    spinning = false;
    clearTimeout(delay);
    if (ticker) {
      clearInterval(ticker);
      stream.write("\r\x1b[K");
    }
  }
}

/** UTC, to the second: `2025-01-02T03:04:05Z`. */
export const isoSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
