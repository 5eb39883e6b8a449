import { A_CLSE, A_WRTE, chunks } from "./wire.ts";

/** What a stream needs from its connection. */
export interface StreamLink {
  send(command: number, arg0: number, arg1: number, data?: Uint8Array): void;
  /** The negotiated maximum payload; every WRTE is cut to fit it. */
  readonly maxData: number;
}

/**
 * The device end of one adb stream. Writes are queued through a promise chain and each WRTE
 * waits for the host's OKAY before the next goes out: one packet in flight, as protocol.txt asks.
 */
export class AdbdStream {
  private chain: Promise<void> = Promise.resolve();
  private ack: (() => void) | null = null;
  private readonly controller = new AbortController();
  private sentClose = false;
  /** Host WRTE payloads; the connection has already answered each with OKAY. */
  onData: (data: Uint8Array) => void = () => {};
  /** The host closed its end, or the transport went away. */
  onClose: () => void = () => {};

  constructor(
    private readonly link: StreamLink,
    readonly localId: number,
    readonly remoteId: number,
    readonly service: string,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.controller.signal.aborted || this.sentClose;
  }

  /** Queues `data` (split to maxData); resolves once the host has acknowledged its last packet. */
  write(data: Uint8Array): Promise<void> {
    if (data.length === 0) return this.chain;
    for (const part of chunks(data, this.link.maxData)) {
      this.chain = this.chain.then(() => {
        if (this.closed) return;
        return new Promise<void>((resolve) => {
          this.ack = resolve;
          this.link.send(A_WRTE, this.localId, this.remoteId, part);
        });
      });
    }
    return this.chain;
  }

  /** Sends CLSE after everything queued has been acknowledged. */
  end(): Promise<void> {
    this.chain = this.chain.then(() => {
      if (this.closed) return;
      this.sentClose = true;
      this.link.send(A_CLSE, this.localId, this.remoteId);
    });
    return this.chain;
  }

  handleOkay(): void {
    const a = this.ack;
    this.ack = null;
    a?.();
  }

  /** The host's CLSE or the loss of the transport: stop writing and tell the service. */
  handleClose(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    this.handleOkay();
    this.onClose();
  }
}
