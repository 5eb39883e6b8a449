import { createHash } from "node:crypto";
import { MockApp } from "../../drivers/mock/mock-app.ts";
import { renderScreen } from "../../drivers/mock/mock-screen.ts";

/** The digest of the Mock's first screen (sign-in, unfocused, light): every fresh mock device shows it. */
export const LOGIN_SCREEN_SHA = createHash("sha256")
  .update(renderScreen(new MockApp().tree(), { dark: false, focusedNodeId: null }))
  .digest("hex");

export const pngRef = (sha: string) => ({
  id: `sha256:${sha}`,
  mediaType: "image/png",
  uri: `devicerail://assets/sha256/${sha}`,
  sha256: sha,
});

export const LOGIN_SCREEN_PNG = renderScreen(new MockApp().tree(), { dark: false, focusedNodeId: null });
export const UI_TREE_MEDIA_TYPE = "application/vnd.devicerail.ui-tree+json;version=1";
/** The context of a fresh Mock's first tree. */
export const LOGIN_CONTEXT = { contextKind: "native", contextId: "com.devicerail.mock", documentEpoch: "login-1" };
/** The metadata of an observation with a tree of a fresh Mock's screen; the sign-in screen's password field has its state. */
export const MOCK_METADATA = (frameSequence: number, screen = "login") => ({
  frameSequence,
  foregroundApp: "com.devicerail.mock",
  screen,
  ...(screen === "login" ? { uiStates: { "login/password": ["password"] } } : {}),
});
