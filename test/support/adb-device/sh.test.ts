import { describe, expect, test } from "bun:test";
import { type CommandIo, StdinBuffer, text } from "./command-io.ts";
import { expandWord, parseScript, runScript, ShellSyntaxError } from "./sh.ts";

/** Runs `src` with commands that record their argv; `fail` exits 1, `say` prints its args on stdout and stderr. */
async function run(src: string, stdinText = "") {
  const calls: string[][] = [];
  const out: string[] = [];
  const err: string[] = [];
  const files = new Map<string, string>([["/in.txt", "from file\n"]]);
  const stdin = new StdinBuffer();
  stdin.push(new TextEncoder().encode(stdinText));
  stdin.end();
  const io: CommandIo = {
    stdin,
    out: (d) => out.push(typeof d === "string" ? d : text(d)),
    err: (d) => err.push(typeof d === "string" ? d : text(d)),
    signal: new AbortController().signal,
    unplug: () => {},
  };
  const status = await runScript(parseScript(src), io, {
    exec: async (argv, sub) => {
      calls.push(argv);
      if (argv[0] === "say") sub.out(`${argv.slice(1).join(" ")}\n`), sub.err(`err:${argv.slice(1).join(" ")}\n`);
      if (argv[0] === "cat") sub.out(await sub.stdin.readAll());
      return argv[0] === "fail" ? 1 : 0;
    },
    readFile: (p) => (files.has(p) ? new TextEncoder().encode(files.get(p)) : null),
    writeFile: (p, d, append) => files.set(p, (append ? (files.get(p) ?? "") : "") + text(d)),
  });
  return { status, calls, out: out.join(""), err: err.join(""), files: Object.fromEntries(files) };
}

describe("sh", () => {
  test("quoting keeps single-quoted text literal, handles double quotes and backslashes", async () => {
    const r = await run(`a 'it'\\''s' "say \\"hi\\" \\$x \\n" b\\ c '' ""`);
    expect(r.calls).toEqual([["a", "it's", 'say "hi" $x \\n', "b c", "", ""]]);
  });

  test("an adb exec-out command line splits back into the original argv", async () => {
    expect((await run("screencap '-p'")).calls).toEqual([["screencap", "-p"]]);
  });

  test("&& and || run by the previous status and ; always runs", async () => {
    const r = await run("fail && a; fail || b; true && c || d\nfail\n");
    expect([r.calls, r.status]).toEqual([[["fail"], ["fail"], ["b"], ["true"], ["c"], ["fail"]], 1]);
  });

  test("a list may continue on the next line after && when the script spans lines", async () => {
    expect((await run("true &&\n  a")).calls).toEqual([["true"], ["a"]]);
  });

  test("redirections write, append, discard and duplicate streams", async () => {
    const r = await run(
      "say one > /o.txt; say two >> /o.txt 2>/dev/null; say three 2>&1 >/dev/null; say four >&2 2>/dev/null",
    );
    expect([r.files["/o.txt"], r.out, r.err]).toEqual(["one\ntwo\n", "err:three\n", "err:one\nfour\n"]);
  });

  test("< reads stdin from a file and reports a missing one", async () => {
    expect((await run("cat < /in.txt")).out).toBe("from file\n");
    expect(await run("cat < /nope; a")).toMatchObject({
      err: "/system/bin/sh: can't open '/nope': No such file or directory\n",
      calls: [["a"]],
    });
  });

  test("variables expand, unquoted ones split into fields, and $? is the last status", async () => {
    const r = await run(`X='a  b'; say $X "$X" \${X}c; fail; say $?`);
    expect(r.calls).toEqual([["say", "a", "b", "a  b", "a", "bc"], ["fail"], ["say", "1"]]);
  });

  test("read takes a line from stdin and keeps blanks when IFS is empty", async () => {
    const r = await run(`IFS= read -r s; say "[$s]"; read t; say "[$t]"; read u || say eof`, "  p@ss w0rd \n x \n");
    expect(r.calls).toEqual([
      ["say", "[  p@ss w0rd ]"],
      ["say", "[x]"],
      ["say", "eof"],
    ]);
  });

  test("exit stops the script with its status", async () => {
    expect(await run("a; exit 3; b")).toMatchObject({ status: 3, calls: [["a"]] });
  });

  test("a comment runs to the end of the line when # starts a word", async () => {
    expect((await run("a b#c # d e\nf")).calls).toEqual([["a", "b#c"], ["f"]]);
  });

  test("pipes, background jobs, subshells and substitutions are refused", () => {
    const messages = ["a | b", "a &", "(a)", "echo `a`", "echo $(a)", "a &&", "a 3>f", 'echo "x'].map((s) => {
      try {
        parseScript(s);
        return "parsed";
      } catch (e) {
        return e instanceof ShellSyntaxError ? e.message : String(e);
      }
    });
    expect(messages).toEqual([
      "unsupported pipe |",
      "unsupported background job &",
      "unsupported subshell (",
      "unsupported command substitution `",
      "unsupported expansion $(",
      "unexpected end of script after && or ||",
      "unsupported file descriptor 3",
      'unterminated "',
    ]);
  });

  test("expandWord drops an empty unquoted variable but keeps an empty quoted one", () => {
    const lookup = () => "";
    expect(expandWord([{ kind: "var", name: "E", quoted: false }], lookup)).toEqual([]);
    expect(expandWord([{ kind: "var", name: "E", quoted: true }], lookup)).toEqual([""]);
  });
});
