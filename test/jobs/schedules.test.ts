import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskQueue } from '../../core/config.js';
import { housekeepingScheduleId } from '../../jobs/housekeeping.js';
import {
  describeSchedule,
  ensureSchedule,
  pauseSchedule,
  removeSchedule,
  type ScheduleSpec,
  triggerSchedule,
  unpauseSchedule,
} from '../../jobs/schedules.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A schedule of the health ping, whose run proves a worker of the queue took it. */
function pingSpec(name: string, every: ScheduleSpec['every']): ScheduleSpec {
  const queue = taskQueue(stack.config, 'indexing');
  return { scheduleId: `${stack.config.taskQueuePrefix}${name}`, every, workflowType: 'pingWorkflow', taskQueue: queue, args: [queue], note: 'a test schedule' };
}

/** The result of the schedule's latest run, once it has one. */
async function latestRun(scheduleId: string, after = 0): Promise<unknown> {
  const d = await until(
    () => stack.temporal.schedule.getHandle(scheduleId).describe(),
    (x) => x.info.numActionsTaken > after && x.info.recentActions.length > 0,
    { timeoutMs: 30_000, what: `a run of ${scheduleId}` },
  );
  const { workflowId, firstExecutionRunId } = d.info.recentActions.at(-1)!.action.workflow;
  return stack.temporal.workflow.getHandle(workflowId, firstExecutionRunId).result();
}

describe('Temporal Schedules (jobs/schedules.ts)', () => {
  it('creates a schedule once, then leaves it as it is', async () => {
    const spec = pingSpec('daily', '1 day');
    expect(await ensureSchedule(stack.temporal, spec)).toBe('created');
    expect(await ensureSchedule(stack.temporal, spec)).toBe('unchanged');
    const state = await describeSchedule(stack.temporal, spec.scheduleId);
    expect(state).toMatchObject({ every: 86_400_000, paused: false, note: 'a test schedule', lastRunAt: null });
    // Spread over the day, not at midnight for everyone: the next run is within a day.
    expect(state!.nextRunAt!.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(state!.nextRunAt!.getTime()).toBeGreaterThan(Date.now() - 1000);
  });

  it('keeps a pause and its note when the interval changes, until unpaused', async () => {
    const spec = pingSpec('paused', '1 hour');
    await ensureSchedule(stack.temporal, spec);
    expect(await pauseSchedule(stack.temporal, spec.scheduleId, 'the git host is down for maintenance')).toBe(true);
    expect(await ensureSchedule(stack.temporal, { ...spec, every: '2 hours' })).toBe('updated');
    expect(await describeSchedule(stack.temporal, spec.scheduleId)).toMatchObject({
      every: 7_200_000,
      paused: true,
      note: 'the git host is down for maintenance',
    });
    expect(await unpauseSchedule(stack.temporal, spec.scheduleId)).toBe(true);
    expect((await describeSchedule(stack.temporal, spec.scheduleId))!.paused).toBe(false);
  });

  it('brings a changed action (arguments, queue) up to date', async () => {
    const spec = pingSpec('args', '1 hour');
    await ensureSchedule(stack.temporal, spec);
    const other = taskQueue(stack.config, 'transcription');
    expect(await ensureSchedule(stack.temporal, { ...spec, taskQueue: other, args: [other] })).toBe('updated');
    const d = await stack.temporal.schedule.getHandle(spec.scheduleId).describe();
    expect(d.action).toMatchObject({ taskQueue: other, args: [other], workflowType: 'pingWorkflow' });
    expect(d.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 600_000 });
  });

  it('runs its workflow at its interval, with nobody asking', async () => {
    const spec = pingSpec('every-2s', 2000);
    await ensureSchedule(stack.temporal, spec);
    const result = (await latestRun(spec.scheduleId)) as { taskQueue: string; answeredBy: string };
    expect(result.answeredBy).toContain(spec.taskQueue);
    expect((await describeSchedule(stack.temporal, spec.scheduleId))!.lastRunAt).toBeInstanceOf(Date);
    await removeSchedule(stack.temporal, spec.scheduleId);
  });

  it('is triggered at once on request', async () => {
    const spec = pingSpec('trigger', '1 day');
    await ensureSchedule(stack.temporal, spec);
    expect(await triggerSchedule(stack.temporal, spec.scheduleId)).toBe(true);
    expect(await latestRun(spec.scheduleId)).toMatchObject({ taskQueue: spec.taskQueue });
  });

  it('is created once when several processes ensure it at the same moment', async () => {
    const spec = pingSpec('race', '1 hour');
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => ensureSchedule(stack.temporal, spec)));
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'created').every((o) => o === 'unchanged')).toBe(true);
  });

  it('removes a schedule; a schedule already gone is no error', async () => {
    const spec = pingSpec('removed', '1 hour');
    await ensureSchedule(stack.temporal, spec);
    expect(await removeSchedule(stack.temporal, spec.scheduleId)).toBe(true);
    expect(await describeSchedule(stack.temporal, spec.scheduleId)).toBeNull();
    expect(await removeSchedule(stack.temporal, spec.scheduleId)).toBe(false);
    expect(await pauseSchedule(stack.temporal, spec.scheduleId, 'x')).toBe(false);
    expect(await unpauseSchedule(stack.temporal, spec.scheduleId)).toBe(false);
    expect(await triggerSchedule(stack.temporal, spec.scheduleId)).toBe(false);
    // And it can be made again.
    expect(await ensureSchedule(stack.temporal, spec)).toBe('created');
  });

  it('passes other errors on', async () => {
    await expect(ensureSchedule(stack.temporal, { ...pingSpec('bad', '1 hour'), every: 'whenever' })).rejects.toThrow();
    await expect(ensureSchedule(stack.temporal, { ...pingSpec('bad', '1 hour'), scheduleId: '' })).rejects.toThrow();
    // A namespace that does not exist is no "schedule already gone".
    const elsewhere = new Client({ connection: stack.temporal.connection, namespace: 'no-such-namespace' });
    await expect(describeSchedule(elsewhere, 'x')).rejects.toThrow(/namespace/i);
    await expect(removeSchedule(elsewhere, 'x')).rejects.toThrow(/namespace/i);
  });
});

describe('housekeeping on a schedule', () => {
  it('is scheduled hourly at start and runs its chores once at once', async () => {
    const id = housekeepingScheduleId(stack.config);
    const state = await until(() => describeSchedule(stack.temporal, id), (s) => s !== null, { what: 'the housekeeping schedule' });
    expect(state!.every).toBe(3_600_000);
    expect(await latestRun(id)).toEqual({ failed: [] });
  });

  it('heartbeats, so a run whose result Temporal could not take is run again within a minute', async () => {
    const d = await stack.temporal.schedule.getHandle(housekeepingScheduleId(stack.config)).describe();
    const { workflowId, firstExecutionRunId } = d.info.recentActions.at(-1)!.action.workflow;
    const history = await stack.temporal.workflow.getHandle(workflowId, firstExecutionRunId).fetchHistory();
    const scheduled = history.events!.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => !!a);
    expect(scheduled.map((a) => [a.activityType!.name, Number(a.heartbeatTimeout?.seconds ?? 0)])).toEqual([['housekeeping', 60]]);
  });
});
