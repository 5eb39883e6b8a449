/**
 * Live mode: the page the daemon serves follows the Session over the event plane (a WebSocket,
 * docs/protocol/event-stream.md), appending each new event as a step and reading the UI trees
 * the model does not carry from the daemon.
 */
import type { TestEvent } from "../../../protocol/types/event.ts";
import type { UiNode } from "../../../protocol/types/ui.ts";
import { SHA256, live, model } from "./data.ts";
import { redrawBeforeMarkers, renderDetail } from "./detail.ts";
import { isObj } from "./format.ts";
import { liveStatus, timeline } from "./layout.ts";
import { type Observation, ingest, lastSequence, steps } from "./steps.ts";
import { renderCounts, renderSummary } from "./summary.ts";
import { fillStepItem, select, selected, sizeSeqColumn, updateNoMatch } from "./timeline.ts";
import { fillTreeSlot, treeSlot } from "./tree-view.ts";
import { compactNode, treeCache, treeFetches, treeNodes, treeShaOf } from "./trees.ts";

type Live = NonNullable<typeof live>;

function setLiveStatus(text: string): void {
  liveStatus.textContent = text;
  liveStatus.setAttribute("data-state", text);
}

/** One event from the stream: derive, then redraw only what it touched. */
function onLiveEvent(event: TestEvent): void {
  const followLast = !selected || selected === steps[steps.length - 1];
  const change = ingest(event);
  if (!change) return;
  model.events.push(event);
  prefetchTrees(event);
  const { step, isNew } = change;
  fillStepItem(step);
  if (isNew) {
    timeline.append(step.li);
    sizeSeqColumn();
  }
  renderSummary();
  renderCounts();
  updateNoMatch();
  if (isNew && followLast) select(step, { focus: false });
  else if (step === selected) renderDetail(step);
}

/** Live trees are not in the model: read each from the daemon as soon as its event arrives. */
function prefetchTrees(event: TestEvent): void {
  const p = event.payload || {};
  const observations: (Observation | null | undefined)[] = [];
  if (p.type === "observationCaptured") observations.push(p.observation);
  if (p.type === "actionCompleted" && isObj(p.outcome) && p.outcome.outcome === "succeeded" && isObj(p.outcome.result))
    observations.push(p.outcome.result.before, p.outcome.result.after);
  for (const obs of observations) {
    const sha = treeShaOf(obs);
    if (sha && SHA256.test(sha) && !treeNodes(sha) && !treeFetches.has(sha)) void fetchTree(sha);
  }
}

async function fetchTree(sha: string): Promise<void> {
  const { evidenceBase, evidenceQuery } = live as Live;
  treeFetches.set(sha, "pending");
  try {
    const response = await fetch(`${evidenceBase}${sha}${evidenceQuery || ""}`, { credentials: "same-origin" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const snapshot = (await response.json()) as { nodes?: unknown };
    model.trees[sha] = (Array.isArray(snapshot.nodes) ? (snapshot.nodes as UiNode[]) : []).map(compactNode);
    treeFetches.delete(sha);
  } catch {
    treeFetches.set(sha, "failed");
  }
  treeCache.delete(sha);
  if (treeSlot.node && treeSlot.waitsFor.has(sha)) fillTreeSlot();
  if (treeSlot.markersWaitFor === sha && selected) redrawBeforeMarkers(selected);
}

export function startLive(where: Live): void {
  setLiveStatus("live");
  let terminal = false;
  let socket: WebSocket;
  try {
    socket = new WebSocket(where.endpoint, "devicerail.events.v1");
  } catch {
    setLiveStatus("disconnected");
    return;
  }
  const send = (message: unknown) => socket.send(JSON.stringify(message));
  socket.addEventListener("open", () => {
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "system.hello",
      params: {
        client: { name: "devicerail-report", version: "1" },
        protocol: { ranges: [{ major: 1, minMinor: 3, maxMinor: 5 }] },
        features: { required: ["events.stream.v1"], optional: [] },
      },
    });
  });
  socket.addEventListener("message", (e: MessageEvent) => {
    let msg: unknown;
    try {
      msg = JSON.parse(e.data);
    } catch {
      return;
    }
    if (!isObj(msg)) return;
    if (msg.id === 1 && msg.result) {
      const sessionId = model.session.id;
      const params: { sessionId: string; afterCursor?: { streamEpoch: string; sessionId: string; sequence: number } } =
        { sessionId };
      // Only what the page does not have yet; a Session with no events yet is read from its start.
      if (lastSequence > 0) params.afterCursor = { streamEpoch: where.streamEpoch, sessionId, sequence: lastSequence };
      send({ jsonrpc: "2.0", id: 2, method: "events.subscribe", params });
    } else if (msg.method === "events.stream.event" && isObj(msg.params)) {
      onLiveEvent(msg.params.event as TestEvent);
    } else if (msg.method === "events.stream.terminal") {
      terminal = true;
      setLiveStatus("ended");
    }
  });
  socket.addEventListener("close", () => {
    if (!terminal) setLiveStatus("disconnected");
  });
}
