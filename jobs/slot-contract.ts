/**
 * What the concurrency pool's workflow (workflows/slots.ts), its client (jobs/slots.ts) and its activities
 * (activities/slots.ts) agree on (docs/jobs.md, "Concurrency pools"). Pure: the workflow bundle includes it.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export interface SlotRequest {
  requestId: string;
  workflowId: string;
  /** The requesting run: its slot is taken back once that run has ended, whatever runs later under the same id. */
  runId?: string;
}

/** The pool workflow's input, what it continues as new with, and the answer of its `state` query. */
export interface SlotsState {
  pool: string;
  /** 0 until read from the pool's setting. */
  limit: number;
  holders: SlotRequest[];
  waiting: SlotRequest[];
  /** The running jobs PostgreSQL knows of were taken on as holders (done once, by the first run of a pool). */
  adopted?: boolean;
  /** SLOT_CHECK_INTERVAL_MS, read from the worker's configuration. */
  checkMs?: number;
  /** History events a run of the pool collects before it continues as new (5000; test/replay records with fewer). */
  historyLimit?: number;
}

/** What a waiting job knows about the pool that has its request. */
export interface SlotTicket {
  /** The pool's workflow id. */
  workflowId: string;
  /** The pool's run that took the request. */
  runId: string;
  /** How long to wait before checking again (SLOT_CHECK_INTERVAL_MS). */
  checkMs: number;
}

/** The pool workflow, by its type name: the client starts it without importing workflow code. */
export const SLOTS_WORKFLOW = 'slotsWorkflow';
export type SlotsWorkflow = (state: SlotsState) => Promise<void>;

/** Asks for a slot; idempotent by `requestId`, and a holder that asks again is granted again. */
export const acquireSlotSignal = defineSignal<[SlotRequest]>('acquireSlot');
/** Gives back the slot of a request id, or withdraws it from the queue. */
export const releaseSlotSignal = defineSignal<[string]>('releaseSlot');
export const setSlotLimitSignal = defineSignal<[number]>('setSlotLimit');
/** Sent by the pool to the requesting run, with its request id. */
export const slotGrantedSignal = defineSignal<[string]>('slotGranted');
export const slotsStateQuery = defineQuery<SlotsState>('state');

/** The activities the pool workflow and `withSlot` call (activities/slots.ts). */
export interface SlotActivities {
  /** Asks the pool for a slot, starting it if need be; with `poolRunId`, only if that run is no longer the pool's. */
  requestSlot(input: { pool: string; request: SlotRequest; poolRunId?: string }): Promise<SlotTicket>;
  slotSettings(pool: string): Promise<{ limit: number; checkMs: number }>;
  /** The runs PostgreSQL says hold a slot of `pool`: their jobs have started and not finished. */
  slotHolders(pool: string): Promise<SlotRequest[]>;
  /** The request ids among `requests` whose runs are still running. */
  liveSlotRequests(requests: SlotRequest[]): Promise<string[]>;
}
