/** The MCP tools, in the order tools/list gives them: one module each. */
import type { Tool } from "../tool.ts";
import deviceObserve from "./device-observe.ts";
import devicesList from "./devices-list.ts";
import doubleTap from "./double-tap.ts";
import launchApp from "./launch-app.ts";
import longPress from "./long-press.ts";
import openUrl from "./open-url.ts";
import pressKey from "./press-key.ts";
import screenshot from "./screenshot.ts";
import sessionVerdict from "./session-verdict.ts";
import setSecret from "./set-secret.ts";
import swipe from "./swipe.ts";
import tap from "./tap.ts";
import terminateApp from "./terminate-app.ts";
import typeText from "./type-text.ts";
import uiTree from "./ui-tree.ts";
import waitFor from "./wait-for.ts";

export const TOOLS: readonly Tool[] = [
  devicesList,
  deviceObserve,
  screenshot,
  uiTree,
  tap,
  doubleTap,
  longPress,
  swipe,
  typeText,
  pressKey,
  launchApp,
  terminateApp,
  openUrl,
  waitFor,
  setSecret,
  sessionVerdict,
];

/** The tool of a name, or undefined. */
export const toolNamed = (name: string) => TOOLS.find((t) => t.name === name);
