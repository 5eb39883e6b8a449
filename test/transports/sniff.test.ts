import { describe, expect, test } from "bun:test";
import { classify } from "../../src/transports/sniff.ts";

const bytes = (text: string | number[]) =>
  typeof text === "string" ? new TextEncoder().encode(text) : new Uint8Array(text);

describe("classify", () => {
  test("JSON and whitespace first bytes are NDJSON when a connection begins with them", () => {
    expect(['{"jsonrpc"', "[1]", " {", "\t", "\r\n", "\n"].map((t) => classify(bytes(t)))).toEqual(
      Array(6).fill("ndjson"),
    );
  });

  test("a request line is HTTP whatever its method when the first byte is a letter", () => {
    expect(
      ["GET / HTTP/1.1", "POST /", "DELETE /x", "DEV", "options", "PRI * HTTP/2.0"].map((t) => classify(bytes(t))),
    ).toEqual(["http", "http", "http", "undecided", "http", "http"]);
  });

  test("the token line is recognised only when its whole prefix has arrived", () => {
    expect(
      [
        "D",
        "DEVICERAIL-TOKEN",
        "DEVICERAIL-TOKEN ",
        "DEVICERAIL-TOKEN abc",
        "DEVICERAIL-TOKENS",
        "DEVICERAIL-token x",
      ].map((t) => classify(bytes(t))),
    ).toEqual(["undecided", "undecided", "token", "token", "http", "http"]);
  });

  test("the stdio relay line is recognised only when it has arrived whole, line feed included", () => {
    expect(
      [
        "DEVICERAIL-STDIO\n",
        'DEVICERAIL-STDIO\n{"id":1}',
        "DEVICERAIL-STDIO",
        "DEVICERAIL-",
        "DEVICERAIL-STDIOX",
        "DEVICERAIL-STDIO\r\n",
      ].map((t) => classify(bytes(t))),
    ).toEqual(["relay", "relay", "undecided", "undecided", "http", "http"]);
  });

  test("other first bytes are refused, and nothing is decided before the first byte", () => {
    // A TLS ClientHello, a NUL, a digit, a quote, non-ASCII.
    expect(
      [[0x16, 0x03, 0x01], [0], bytes("1"), bytes('"x"'), [0xc3, 0xa9]].map((b) => classify(bytes(b as number[]))),
    ).toEqual(Array(5).fill("refuse"));
    expect(classify(new Uint8Array(0))).toBe("undecided");
  });
});
