import { describe, expect, test } from "bun:test";
import {
  exitMarker,
  exitTrailer,
  inputTextChunks,
  isAsciiTypable,
  quote,
  splitExit,
} from "../../../../drivers/android/parse/shell.ts";
import { demoScenario, FakePhone } from "../../../support/adb-device/index.ts";
import { decodeInputText } from "../../../support/adb-device/input-command.ts";
import { expandWord, parseScript } from "../../../support/adb-device/sh.ts";

/** The argv the device's sh builds from a command line. */
function argvOf(line: string): string[] {
  return parseScript(line).flatMap(({ command }) => command.words.flatMap((w) => expandWord(w, () => undefined)));
}

const shell = (phone: FakePhone, src: string) => phone.runForText(src);

const HOSTILE = [
  "",
  "plain",
  "a b",
  "it's",
  "''",
  "'",
  "a;b",
  "$(id)",
  "`id`",
  '"quoted"',
  "line\nbreak\n",
  "back\\slash\\",
  "$HOME ${X} $?",
  "*?[a]",
  "&& || | & > < #",
  "\t tab",
  "ünï ☃ \u{1F600}",
];

describe("quote", () => {
  test("round-trips through the device's sh when the argument is hostile", () => {
    expect(HOSTILE.map((s) => argvOf(quote(s)))).toEqual(HOSTILE.map((s) => [s]));
  });

  test("writes POSIX single-quote form when the argument has quotes", () => {
    expect([quote("it's"), quote(""), quote("a'b'c")]).toEqual(["'it'\\''s'", "''", "'a'\\''b'\\''c'"]);
  });

  test("reaches a command unchanged when run on the simulated phone", async () => {
    const phone = new FakePhone();
    const { out } = await shell(phone, `echo ${HOSTILE.map(quote).join(" ")}`);
    expect({ out, problems: phone.problems }).toEqual({ out: `${HOSTILE.join(" ")}\n`, problems: [] });
  });

  test("throws RangeError when the argument contains NUL", () => {
    expect(() => quote("a\u0000b")).toThrow(RangeError);
  });
});

describe("isAsciiTypable", () => {
  test("accepts printable ASCII only when given control, DEL or non-ASCII characters", () => {
    expect(["", "Hello, World! ~", " ", "tab\t", "new\nline", "\u007f", "é", "\u{1F600}"].map(isAsciiTypable)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("inputTextChunks", () => {
  test("sends spaces as %s and splits a literal %s when the text has both", () => {
    expect(["hello world", "100%sure", "%s%s", "% s", "%", "s", "a%%sb", ""].map(inputTextChunks)).toEqual([
      ["hello%sworld"],
      ["100%", "sure"],
      ["%", "s%", "s"],
      ["%%ss"],
      ["%"],
      ["s"],
      ["a%%", "sb"],
      [],
    ]);
  });

  test("keeps each chunk at most 200 characters without cutting a %s when the text is long", () => {
    const long = inputTextChunks("a".repeat(450));
    const edge = inputTextChunks(`${"a".repeat(199)} b`);
    expect({ long: long.map((c) => c.length), edge }).toEqual({ long: [200, 200, 50], edge: ["a".repeat(199), "%sb"] });
  });

  test("reproduces the text when each chunk's %s becomes a space and the chunks are joined", () => {
    const alphabet = ["%", "s", " ", "a", "'", '"', "\\", "$", "`", ";", "~"];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const texts = Array.from({ length: 300 }, (_, i) =>
      Array.from({ length: 1 + (i % 7) * 60 }, () => alphabet[Math.floor(random() * alphabet.length)]).join(""),
    );
    const check = (text: string) => {
      const chunks = inputTextChunks(text);
      return {
        simple: chunks.map((c) => c.replaceAll("%s", " ")).join("") === text,
        android: chunks.map(decodeInputText).join("") === text,
        sized: chunks.every((c) => c.length > 0 && c.length <= 200 && !c.includes(" ")),
        shellSafe: chunks.every((c) => argvOf(`input text ${quote(c)}`).join("\u0000") === `input\u0000text\u0000${c}`),
      };
    };
    expect(texts.map(check)).toEqual(texts.map(() => ({ simple: true, android: true, sized: true, shellSafe: true })));
  });

  test("types the text into the focused field when the chunks run on the simulated phone", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    phone.runtime().tap(500, 440, phone.view);
    const text = `it's 100%s "fine" $(id) \`x\` ${"z".repeat(250)}`;
    for (const c of inputTextChunks(text)) await shell(phone, `input text ${quote(c)}`);
    expect({ username: phone.runtime().state.username, problems: phone.problems }).toEqual({
      username: text,
      problems: [],
    });
  });

  test("throws RangeError when the text has characters input text cannot type", () => {
    expect(
      ["a\nb", "a\tb", "é", "\u0000", "\u007f"]
        .map((t) => (() => inputTextChunks(t)) as () => unknown)
        .map((f) => {
          try {
            f();
            return "no error";
          } catch (e) {
            return e instanceof RangeError ? e.message : "other";
          }
        }),
    ).toEqual(Array(5).fill("input text takes printable ASCII (0x20-0x7e) only"));
  });
});

describe("exitTrailer", () => {
  test("puts the marker and status on a line of their own when appended", () => {
    expect(exitTrailer("__DR_abcdef12")).toBe('; echo "\n__DR_abcdef12$?"');
  });

  test("throws RangeError when the marker could break the quoting or is guessable", () => {
    expect(
      ["", "short", 'bad"marker', "with space!", "x".repeat(65)].map((m) => {
        try {
          exitTrailer(m);
          return "no error";
        } catch (e) {
          return e instanceof RangeError;
        }
      }),
    ).toEqual([true, true, true, true, true]);
  });

  test("creates a fresh marker each time when asked for one", () => {
    const [a, b] = [exitMarker(), exitMarker()];
    expect({ distinct: a !== b, usable: exitTrailer(a).length > 0, shape: /^__DR_[0-9a-f]{18}$/.test(a) }).toEqual({
      distinct: true,
      usable: true,
      shape: true,
    });
  });
});

describe("splitExit", () => {
  const M = "__DR_0123456789abcdef01";

  test("separates output and status when commands run on the simulated phone", async () => {
    const phone = new FakePhone();
    const run = async (cmd: string) => splitExit((await shell(phone, `${cmd}${exitTrailer(M)}`)).out, M);
    expect([
      await run("echo hello"),
      await run("echo -n partial"),
      await run("cat /nope"),
      await run("true && false"),
      await run("echo hi; exit 3"),
    ]).toEqual([
      { body: "hello\n", exitCode: 0 },
      { body: "partial", exitCode: 0 },
      { body: "", exitCode: 1 },
      { body: "", exitCode: 1 },
      null,
    ]);
  });

  test("takes the last marker when the output itself prints one", () => {
    expect(splitExit(`fake\n${M}0\nreal\n\n${M}2\n`, M)).toEqual({ body: `fake\n${M}0\nreal\n`, exitCode: 2 });
  });

  test("strips the pty's carriage return when the trailer ends in CRLF", () => {
    expect([splitExit(`line\r\n\r\n${M}0\r\n`, M), splitExit(`cr\r\n${M}5\n`, M)]).toEqual([
      { body: "line\r\n", exitCode: 0 },
      { body: "cr\r", exitCode: 5 },
    ]);
  });

  test("returns null when the trailer is missing, cut or followed by more output", () => {
    const outputs = [
      "",
      "hello\n",
      `hello\n${M}`,
      `\n${M}256\n`,
      `\n${M}0\nlate output\n`,
      `${M}0\n`,
      `\n${M.slice(0, -1)}0\n`,
    ];
    expect(outputs.map((o) => splitExit(o, M))).toEqual(outputs.map(() => null));
  });
});
