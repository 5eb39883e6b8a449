import type { DeviceInfo } from "../../protocol/types/device.ts";

/** Every driver's devices in one place, ordered by id (byte order, as the reference lists them). */
export class DeviceRegistry {
  private readonly devices = new Map<string, DeviceInfo>();
  private sorted: string[] = [];

  deviceIds(): readonly string[] {
    return this.sorted;
  }

  list(): DeviceInfo[] {
    return this.sorted.map((id) => this.devices.get(id) as DeviceInfo);
  }

  get(id: string): DeviceInfo | undefined {
    return this.devices.get(id);
  }

  upsert(info: DeviceInfo): void {
    const isNew = !this.devices.has(info.id);
    this.devices.set(info.id, info);
    if (isNew) this.sorted = [...this.devices.keys()].sort(byteOrder);
  }

  remove(id: string): boolean {
    const had = this.devices.delete(id);
    if (had) this.sorted = this.sorted.filter((x) => x !== id);
    return had;
  }
}

/** Byte-wise (UTF-8) order equals code-point order; JS's default sort compares UTF-16 units. */
export function byteOrder(a: string, b: string): number {
  const ai = a[Symbol.iterator]();
  const bi = b[Symbol.iterator]();
  for (;;) {
    const x = ai.next();
    const y = bi.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = (x.value.codePointAt(0) as number) - (y.value.codePointAt(0) as number);
    if (d !== 0) return d;
  }
}
