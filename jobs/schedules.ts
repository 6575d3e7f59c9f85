import { createHash } from 'node:crypto';
import {
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleUpdateOptions,
  type ScheduleOptionsStartWorkflowAction,
  type Workflow,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';

/**
 * Periodic work runs on Temporal Schedules, never on timers inside a process: a schedule survives restarts, runs on
 * whichever worker polls its queue, and an operator sees, pauses and triggers it in the Temporal UI. These helpers
 * are safe to call from every process at every start: creating an existing schedule updates it, removing a missing
 * one is a no-op.
 */
export interface ScheduleSpec {
  /** Also the id of its runs (Temporal appends the time each run was scheduled for). */
  scheduleId: string;
  /** Milliseconds, or a duration such as `6h` or `1 day`. */
  every: Duration;
  workflowType: string;
  taskQueue: string;
  args: unknown[];
  /** Set when the schedule is created (Temporal keeps a schedule's memo as it was). */
  memo?: Record<string, unknown>;
  /** The schedule's note when it is created; an operator's later note (a pause reason) is kept. */
  note?: string;
  /** Take one action at once when the schedule is created. */
  runAtCreation?: boolean;
}

export interface ScheduleState {
  every: number;
  paused: boolean;
  note: string | null;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
}

/** A run missed while Temporal was down is still taken when it comes back within this window (or the interval). */
const CATCH_UP_MS = 10 * 60_000;

/**
 * Where in its interval a schedule fires: a fixed point derived from its id, so many schedules of the same interval
 * (every library's daily refresh) spread over the day instead of all firing at midnight.
 */
function offsetOf(scheduleId: string, every: number): number {
  const seconds = Math.floor(every / 1000);
  if (seconds <= 1) return 0;
  return (createHash('sha256').update(scheduleId).digest().readUInt32BE(0) % seconds) * 1000;
}

/** The parts of a schedule its spec decides; `state` (paused, note) is the operator's. */
function planned(spec: ScheduleSpec): Omit<ScheduleUpdateOptions<ScheduleOptionsStartWorkflowAction<Workflow>>, 'state'> {
  const every = msToNumber(spec.every);
  return {
    spec: { intervals: [{ every, offset: offsetOf(spec.scheduleId, every) }] },
    action: { type: 'startWorkflow', workflowType: spec.workflowType, taskQueue: spec.taskQueue, args: spec.args, workflowId: spec.scheduleId },
    // SKIP: a run still going when the next is due (a slow git host) is not joined by a second one.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(10_000, Math.min(every, CATCH_UP_MS)), pauseOnFailure: false },
  };
}

/** Whether the schedule already is what the spec asks for (then nothing is written). */
function matches(current: ScheduleDescription, spec: ScheduleSpec): boolean {
  const want = planned(spec);
  const interval = current.spec.intervals?.[0];
  const wantInterval = want.spec.intervals![0]!;
  return (
    current.spec.intervals?.length === 1 &&
    msToNumber(interval!.every) === msToNumber(wantInterval.every) &&
    msToNumber(interval!.offset ?? 0) === msToNumber(wantInterval.offset ?? 0) &&
    current.action.workflowType === spec.workflowType &&
    current.action.taskQueue === spec.taskQueue &&
    current.action.workflowId === spec.scheduleId &&
    JSON.stringify(current.action.args) === JSON.stringify(spec.args) &&
    current.policies.overlap === want.policies!.overlap &&
    current.policies.catchupWindow === want.policies!.catchupWindow
  );
}

/** Runs `fn` on the schedule; `undefined` when there is no such schedule (never created, or deleted). */
async function ifExists<T>(client: Client, scheduleId: string, fn: (h: ScheduleHandle) => Promise<T>): Promise<T | undefined> {
  try {
    return await fn(client.schedule.getHandle(scheduleId));
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return undefined;
    throw err;
  }
}

async function create(client: Client, spec: ScheduleSpec): Promise<boolean> {
  try {
    await client.schedule.create({
      scheduleId: spec.scheduleId,
      ...planned(spec),
      ...(spec.memo && { memo: spec.memo }),
      state: { ...(spec.note && { note: spec.note }), ...(spec.runAtCreation && { triggerImmediately: true }) },
    });
    return true;
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return false; // another process was quicker
    throw err;
  }
}

/**
 * Creates the schedule, or brings an existing one to the spec, keeping whether it is paused and its note (an
 * operator paused it in the UI: a new interval does not unpause it).
 */
export async function ensureSchedule(client: Client, spec: ScheduleSpec): Promise<'created' | 'updated' | 'unchanged'> {
  // A schedule created or deleted by another process between two of these calls is met by going round again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await ifExists(client, spec.scheduleId, (h) => h.describe());
    if (!current) {
      if (await create(client, spec)) return 'created';
      continue;
    }
    if (matches(current, spec)) return 'unchanged';
    const updated = await ifExists(client, spec.scheduleId, (h) =>
      h
        .update((previous) => ({ ...planned(spec), state: { paused: previous.state.paused, ...(previous.state.note && { note: previous.state.note }) } }))
        .then(() => true),
    );
    if (updated) return 'updated';
  }
  throw new Error(`Schedule ${spec.scheduleId} kept changing while it was being set up`);
}

/** Deletes the schedule (its running action, if any, carries on); false when there was none. */
export async function removeSchedule(client: Client, scheduleId: string): Promise<boolean> {
  return (await ifExists(client, scheduleId, (h) => h.delete().then(() => true))) ?? false;
}

/** The schedule as an operator sees it, or null when there is none. */
export async function describeSchedule(client: Client, scheduleId: string): Promise<ScheduleState | null> {
  const d = await ifExists(client, scheduleId, (h) => h.describe());
  if (!d) return null;
  return {
    every: msToNumber(d.spec.intervals?.[0]?.every ?? 0),
    paused: d.state.paused,
    note: d.state.note || null,
    nextRunAt: d.info.nextActionTimes[0] ?? null,
    lastRunAt: d.info.recentActions.at(-1)?.takenAt ?? null,
  };
}

/** Pauses the schedule with a note saying why; false when there is none. */
export async function pauseSchedule(client: Client, scheduleId: string, note: string): Promise<boolean> {
  return (await ifExists(client, scheduleId, (h) => h.pause(note).then(() => true))) ?? false;
}

export async function unpauseSchedule(client: Client, scheduleId: string, note = 'Unpaused'): Promise<boolean> {
  return (await ifExists(client, scheduleId, (h) => h.unpause(note).then(() => true))) ?? false;
}

/** Takes one action now, whatever the interval (skipped when one is still running); false when there is none. */
export async function triggerSchedule(client: Client, scheduleId: string): Promise<boolean> {
  return (await ifExists(client, scheduleId, (h) => h.trigger(ScheduleOverlapPolicy.SKIP).then(() => true))) ?? false;
}
