/**
 * The simulated UiAutomator2 server's envelope: its errors (W3C code, HTTP status, message, Java
 * class, from appium-uiautomator2-server app/src/main/java/io/appium/uiautomator2/common/exceptions/
 * and handler/request/SafeRequestHandler.java), the reply body, and what a route gets to work with.
 */
import type { FakePhone } from "./fake-phone.ts";

/** A failure as the server reports it: HTTP status, W3C error code, message, exception class. */
export class Uia2Error extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly javaClass: string,
  ) {
    super(message);
  }
}

const EXC = "io.appium.uiautomator2.common.exceptions.";
/**
 * SafeRequestHandler wraps an IllegalArgumentException as `new InvalidArgumentException(e)`, whose
 * message is then the cause's toString(): `java.lang.IllegalArgumentException: <message>`.
 */
export const invalidArgument = (message: string) =>
  new Uia2Error(
    400,
    "invalid argument",
    `java.lang.IllegalArgumentException: ${message}`,
    `${EXC}InvalidArgumentException`,
  );
/** BaseModel.validate's message for a missing @RequiredField. */
export const missing = (model: string, field: string) =>
  invalidArgument(`${model}: The mandatory field '${field}' is not present in JSON`);
/** ElementNotFoundException's default message. */
export const noSuchElement = (
  message = "An element could not be located on the page using the given search parameters",
) => new Uia2Error(404, "no such element", message, `${EXC}ElementNotFoundException`);
/** What the simulation leaves out: a 500 that says so, not a quote of the real server. */
export const notSimulated = (what: string) =>
  new Uia2Error(500, "unknown error", `${what} is not simulated by the fake phone`, "java.lang.RuntimeException");

/** ServerHandler: no handler matched (UnknownCommandException's default message). */
export const unknownCommand = () =>
  new Uia2Error(
    404,
    "unknown command",
    "The requested resource could not be found, or a request was received using an HTTP method that is not supported by the mapped resource",
    `${EXC}UnknownCommandException`,
  );
/** SafeRequestHandler: the path's session is not the current one (NoSuchDriverException). */
export const invalidSession = (sid: string | null) =>
  new Uia2Error(
    404,
    "invalid session id",
    `The session identified by ${sid} is not known`,
    `${EXC}NoSuchDriverException`,
  );

/** What a route needs from the server object. */
export interface Uia2Context {
  readonly phone: FakePhone;
  sessionId: string | null;
  readonly settings: Map<string, unknown>;
  /** Element ids handed out by /element/active → the field they name. */
  readonly elements: Map<string, string>;
  /** Extra milliseconds the request takes (a gesture's own duration). */
  hold(ms: number): void;
  /** DeleteSession: the whole server stops 15 ms after the answer. */
  stopSoon(): void;
}

export type Uia2Op = "status" | "session" | "source" | "screenshot" | "tap" | "gesture" | "key" | "text" | "settings";

/**
 * AppiumResponse.renderTo: `{"value":…,"sessionId":…}` (ResponseModel field order, nulls kept), an
 * error as {error, message, stacktrace}. The stack trace is only its first line here (the real
 * frames are not known). Headers as ServerHandler/NettyHttpResponse set them; Bun sets Connection.
 */
export function reply(sessionId: string | null, value: unknown): Response {
  const error = value instanceof Uia2Error;
  const v = error
    ? { error: value.error, message: value.message, stacktrace: `${value.javaClass}: ${value.message}` }
    : value;
  return new Response(JSON.stringify({ value: v ?? null, sessionId }), {
    status: error ? value.status : 200,
    headers: {
      "Content-Type": "application/json",
      "Content-Encoding": "identity",
      Pragma: "no-cache",
      "Cache-Control": "no-store",
    },
  });
}
