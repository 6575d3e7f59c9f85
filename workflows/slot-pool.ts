import type { SlotRequest, SlotsState } from '../jobs/slot-contract.js';

/** SLOT_CHECK_INTERVAL_MS's default, for a state that has not read it yet. */
const DEFAULT_CHECK_MS = 30_000;
/** History events a run of the pool collects before it continues as new. */
const DEFAULT_HISTORY_LIMIT = 5000;

/**
 * A concurrency pool's holders, queue and limit, and every change to them: a counting semaphore whose permits are
 * held by job runs. The pool workflow (workflows/slots.ts) wires its signals and activities to it; this part is
 * synchronous and deterministic, so it is tested alone. It changes the state it was given in place, and `snapshot`
 * is what the workflow continues as new with.
 */
export class SlotSemaphore {
  /**
   * Goes up with every signal, reclaim and lost grant, whether or not it changed anything: the workflow wakes at
   * each (and then sees whether to continue as new).
   */
  version = 0;
  /** Holders that asked again: their grant may not have reached them, so it is sent again. */
  private readonly regrant = new Set<string>();

  constructor(private readonly state: SlotsState) {}

  get name(): string {
    return this.state.pool;
  }
  get limit(): number {
    return this.state.limit;
  }
  get holders(): readonly SlotRequest[] {
    return this.state.holders;
  }
  get waiting(): readonly SlotRequest[] {
    return this.state.waiting;
  }
  get adopted(): boolean {
    return this.state.adopted ?? false;
  }
  get checkMs(): number {
    return this.state.checkMs ?? DEFAULT_CHECK_MS;
  }
  get historyLimit(): number {
    return this.state.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  }
  /** The limit or the check interval is still to be read (a new pool, or one continued with no slots). */
  get needsSettings(): boolean {
    return this.state.limit <= 0 || !this.state.checkMs;
  }

  /** A request joins the queue once, by its id; a holder that asks again is granted again (`takeRegrants`). */
  acquire(r: SlotRequest): void {
    if (this.isHolder(r.requestId)) this.regrant.add(r.requestId);
    else if (!this.state.waiting.some((w) => w.requestId === r.requestId)) this.state.waiting.push(r);
    this.version++;
  }

  /** Gives back a slot, or withdraws a request from the queue. */
  release(requestId: string): void {
    this.state.holders = this.state.holders.filter((r) => r.requestId !== requestId);
    this.state.waiting = this.state.waiting.filter((r) => r.requestId !== requestId);
    this.version++;
  }

  /** A smaller limit takes no slot back: holders finish, and nobody is granted until they are fewer. */
  setLimit(limit: number): void {
    this.state.limit = limit;
    this.version++;
  }

  /** The settings read at start; a limit already set (by a signal, or carried over) is kept. */
  configure(settings: { limit: number; checkMs: number }): void {
    if (this.state.limit <= 0) this.state.limit = settings.limit;
    this.state.checkMs = settings.checkMs;
    this.version++;
  }

  /** A pool started afresh takes the running jobs as holders, out of the queue if they were waiting in it. */
  adopt(running: readonly SlotRequest[]): void {
    for (const r of running) {
      this.state.waiting = this.state.waiting.filter((w) => w.requestId !== r.requestId);
      if (!this.isHolder(r.requestId)) this.state.holders.push(r);
    }
    this.state.adopted = true;
    this.version++;
  }

  /** Holders whose runs have ended leave: `live` are the request ids of the holders still running. */
  reclaim(live: readonly string[]): void {
    const running = new Set(live);
    this.state.holders = this.state.holders.filter((r) => running.has(r.requestId));
    this.version++;
  }

  /** The run a grant was sent to has ended: its slot is free again. */
  lost(requestId: string): void {
    this.state.holders = this.state.holders.filter((r) => r.requestId !== requestId);
    this.version++;
  }

  /** Moves the first in the queue to the holders while the limit allows; they are to be granted, in this order. */
  grantNext(): SlotRequest[] {
    const granted: SlotRequest[] = [];
    while (this.state.holders.length < this.state.limit && this.state.waiting.length) {
      const next = this.state.waiting.shift()!;
      this.state.holders.push(next);
      granted.push(next);
    }
    if (granted.length) this.version++;
    return granted;
  }

  /** The holders that asked again since the last call, to be granted again. */
  takeRegrants(): SlotRequest[] {
    const holders = [...this.regrant].flatMap((id) => this.state.holders.find((r) => r.requestId === id) ?? []);
    this.regrant.clear();
    return holders;
  }

  /** The state as it is now, a copy: for the `state` query and for continuing as new. */
  snapshot(): SlotsState {
    return { ...this.state, holders: [...this.state.holders], waiting: [...this.state.waiting] };
  }

  private isHolder(requestId: string): boolean {
    return this.state.holders.some((r) => r.requestId === requestId);
  }
}
