import type { UiContextRef } from "../../../protocol/types/ui.ts";

/** Observations remembered per device: enough for a script's recent node references. */
const PER_DEVICE = 256;

/**
 * Which observations of each device carried a UI tree, and in which context. A UiNodeRef is only
 * honoured when its observation is one of these and its context is still the current one, so a
 * reference into an old screen fails as element_stale instead of tapping whatever is there now.
 */
export class TreeMemory {
  private readonly byDevice = new Map<string, Map<string, UiContextRef>>();

  remember(deviceId: string, observationId: string, context: UiContextRef): void {
    let ids = this.byDevice.get(deviceId);
    if (!ids) this.byDevice.set(deviceId, (ids = new Map()));
    ids.set(observationId, context);
    if (ids.size > PER_DEVICE) ids.delete(ids.keys().next().value as string);
  }

  contextOf(deviceId: string, observationId: string): UiContextRef | undefined {
    return this.byDevice.get(deviceId)?.get(observationId);
  }

  forget(deviceId: string): void {
    this.byDevice.delete(deviceId);
  }
}
