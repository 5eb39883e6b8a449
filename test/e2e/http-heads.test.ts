import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ServeDaemon } from "./serve-daemon.ts";

const LISTEN = ["--listen", "127.0.0.1:0"];

/** Sends `raw` on a fresh TCP (or Unix socket) connection and returns everything the server wrote until it closed. */
function exchange(port: number | string, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket =
      typeof port === "number"
        ? connect(port, "127.0.0.1", () => socket.write(raw))
        : connect({ path: port }, () => socket.write(raw));
    let out = "";
    socket.on("data", (d) => {
      out += d.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(out));
  });
}

const statusLine = (answer: string) => answer.split("\r\n", 1)[0];
const bodyOf = (answer: string) => answer.slice(answer.indexOf("\r\n\r\n") + 4);
const stackLines = (stderr: string) => stderr.split("\n").filter((l) => l.includes('"stack"') || /^\s+at /.test(l));

describe("HTTP request heads before authentication", () => {
  test("a Host that is not a valid authority or a malformed request line gets a 4xx and no log line with a stack when it is sent raw", async () => {
    const socket = join(mkdtempSync(join(tmpdir(), "devicerail-heads-")), "d.sock");
    await using d = await ServeDaemon.start([...LISTEN, "--socket", socket]);
    const badHostOn = async (target: number | string, host: string) => {
      const answer = await exchange(target, `GET /sessions HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      return [statusLine(answer), JSON.parse(bodyOf(answer)).error.data.details.reason];
    };
    for (const host of ["[", "a b", "[::1", "a/b", "%"]) {
      // The loopback port's Host allow-list refuses it first; the Unix socket has no allow-list.
      expect(await badHostOn(d.port, host)).toEqual(["HTTP/1.1 403 Forbidden", "hostNotAllowed"]);
      expect(await badHostOn(socket, host)).toEqual(["HTTP/1.1 400 Bad Request", "badHost"]);
    }
    // A target with a space is no request line (Bun itself would answer 505).
    for (const target of [d.port, socket]) {
      const answer = await exchange(target, "GET http://a b/ HTTP/1.1\r\nHost: localhost\r\n\r\n");
      expect([statusLine(answer), JSON.parse(bodyOf(answer)).error.data.details]).toEqual([
        "HTTP/1.1 400 Bad Request",
        { reason: "badRequestLine" },
      ]);
    }
    // Bun's own parser refuses control characters, bodyless.
    expect(
      statusLine(await exchange(d.port, `GET /sessions HTTP/1.1\r\nHost: x\u0001y\r\nConnection: close\r\n\r\n`)),
    ).toBe("HTTP/1.1 400 Bad Request");
    // The daemon still answers well-formed requests.
    expect(
      statusLine(
        await exchange(d.port, `GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nConnection: close\r\n\r\n`),
      ),
    ).toBe("HTTP/1.1 404 Not Found");
    expect(
      statusLine(await exchange(socket, "GET /nothing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")),
    ).toBe("HTTP/1.1 404 Not Found");
    await d.stop();
    rmSync(dirname(socket), { recursive: true, force: true });
    expect(stackLines(d.stderr)).toEqual([]);
  });

  test("a request head over 16 KiB gets 431 Request Header Fields Too Large when it is sent in one piece or trickled", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const big = `GET /sessions HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nX-Filler: ${"a".repeat(17 * 1024)}\r\n\r\n`;
    const answer = await exchange(d.port, big);
    expect([statusLine(answer), JSON.parse(bodyOf(answer)).error.data]).toEqual([
      "HTTP/1.1 431 Request Header Fields Too Large",
      {
        code: "invalid_request",
        message: "request refused: the request head exceeds 16384 bytes",
        retryable: false,
        details: { reason: "headTooLarge", limitBytes: 16384 },
      },
    ]);
    await d.stop();
    expect(stackLines(d.stderr)).toEqual([]);
  });

  test("refused connections write at most 20 log lines a minute when many are refused at once", async () => {
    await using d = await ServeDaemon.start(LISTEN);
    const big = `GET / HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nX-Filler: ${"b".repeat(17 * 1024)}\r\n\r\n`;
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(statusLine(await exchange(d.port, big)));
    expect(new Set(answers)).toEqual(new Set(["HTTP/1.1 431 Request Header Fields Too Large"]));
    await d.stop();
    const refused = d.stderr.split("\n").filter((l) => l.includes("connection refused"));
    expect(refused.length).toBe(20);
  });

  test("the event plane answers a bad Host with a short generic 403 when it is sent raw", async () => {
    await using d = await ServeDaemon.start(LISTEN, { DEVICERAIL_LOG_LEVEL: "info" });
    await d.stderrContains("event stream plane listening");
    const port = Number(/"port":(\d+),"msg":"event stream plane listening"/.exec(d.stderr)?.[1]);
    for (const host of ["[", "a b", "evil.test"]) {
      const answer = await exchange(
        port,
        `GET /v/${"0".repeat(64)} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect([statusLine(answer), bodyOf(answer)]).toEqual(["HTTP/1.1 403 Forbidden", "forbidden"]);
      expect(answer).not.toContain(process.cwd());
    }
    await d.stop();
    expect(stackLines(d.stderr)).toEqual([]);
  });
});
