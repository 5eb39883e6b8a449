/**
 * WebDriverAgent sessions die: the runner restarts, or another client's `POST /session` ends ours
 * (`FBSessionCommands.m handleCreateSession`). Every call under the dead id then gets HTTP 404
 * with `{"value":{"error":"invalid session id","message":"Session does not exist",…}}`
 * (`FBRoute.m` raiseNoSessionException → `FBCommandStatus noSuchDriverErrorWithMessage`,
 * `FBCommandStatus.m:75`), and `sessionId` is the runner's active session or null
 * (`FBResponsePayload.m:94`). The call is made once more under a fresh session — the runner's
 * active one when the error named one, else a new one — and a second loss is a typed error.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import { platformError } from "./tool-process.ts";

/** A 404 "invalid session id" from the runner: the call never ran. */
export class SessionGone extends Error {}

export interface SessionSlot {
  /** The session id in use, or null. */
  current(): string | null;
  forget(): void;
  /** `/session/<id>`, creating a session when there is none. */
  path(ctx: CallContext): Promise<string>;
}

export async function withFreshSession<T>(
  slot: SessionSlot,
  run: (sessionPath: string) => Promise<T>,
  ctx: CallContext,
): Promise<T> {
  let used: string | null = null;
  try {
    const path = await slot.path(ctx);
    used = slot.current();
    return await run(path);
  } catch (err) {
    if (!(err instanceof SessionGone)) throw err;
    // The error reply may have named the runner's active session (adopted already); else start one.
    if (slot.current() === used) slot.forget();
    ctx.log.warn({ err: err.message }, "WebDriverAgent session expired: re-creating it once");
  }
  try {
    return await run(await slot.path(ctx));
  } catch (err) {
    if (!(err instanceof SessionGone)) throw err;
    slot.forget();
    throw platformError(
      "ios_wda_session_lost",
      false,
      err.message,
      "WebDriverAgent dropped the session again right after devicerail re-created it: another client (Appium, a second daemon) is probably creating sessions on this runner; stop it or give devicerail a runner of its own, then retry",
    );
  }
}
