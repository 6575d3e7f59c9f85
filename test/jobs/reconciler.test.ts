import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../db/entities/job.js';
import { readEvents } from '../../jobs/events.js';
import { relaunchJob } from '../../jobs/launch.js';
import { advanceSignal } from '../fixtures/workflows.js';
import { launchProbe, probeKind } from '../support/probe.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ kinds: [probeKind] });
});
afterAll(() => stack?.stop());

const reload = (id: string) => stack.orm.em.fork().findOneOrFail(Job, { id });
/** Moves the job's last change `seconds` into the past, as if it had waited that long. */
const backdate = (id: string, seconds: number) => stack.orm.em.fork().execute(`update job set updated_at = now() - make_interval(secs => ?) where id = ?`, [seconds, id]);

describe('a job follows its workflow when an operator acts in the Temporal UI', () => {
  it('records a cancel from the workflow itself', async () => {
    const { job } = await launchProbe(stack, 3);
    await until(() => reload(job.id), (j) => j.status === 'running');
    await stack.temporal.workflow.getHandle(job.workflowId).cancel();
    const after = await until(() => reload(job.id), (j) => j.completedAt != null);
    expect(after.status).toBe('cancelled');
    expect(after.error).toBe('Cancelled');
  });

  it('marks a terminated workflow failed with the reason', async () => {
    const { job } = await launchProbe(stack, 3);
    await until(() => reload(job.id), (j) => j.status === 'running');
    await stack.temporal.workflow.getHandle(job.workflowId).terminate('operator says stop');
    expect(await stack.reconciler!.runOnce()).toBeGreaterThanOrEqual(1);
    const after = await reload(job.id);
    expect(after.status).toBe('failed');
    expect(after.error).toBe('Terminated in Temporal: operator says stop');
    // The change is an event on the job's stream like any other.
    const events = await readEvents(stack.orm.em.fork(), `job:${job.id}`, 0);
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'failed', error: after.error } });
  });

  it('runs the job again after a reset', async () => {
    const { job } = await launchProbe(stack, 2);
    const handle = stack.temporal.workflow.getHandle(job.workflowId);
    await until(() => reload(job.id), (j) => j.status === 'running');
    await handle.terminate('by mistake');
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('failed');

    // Reset to the first workflow task, as the Temporal UI's "Reset" does.
    const history = await handle.fetchHistory();
    const firstTask = history.events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
    await stack.temporal.workflowService.resetWorkflowExecution({
      namespace: stack.config.temporalNamespace,
      workflowExecution: { workflowId: job.workflowId },
      workflowTaskFinishEventId: firstTask.eventId,
      reason: 'rerun',
      requestId: randomUUID(),
    });
    const revived = await until(() => reload(job.id), (j) => j.status === 'running');
    expect(revived.completedAt).toBeNull();
    expect(revived.error).toBeNull();
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('running'); // the new run is alive: left alone

    await stack.temporal.workflow.getHandle(job.workflowId).signal(advanceSignal, 2);
    const done = await until(() => reload(job.id), (j) => j.completedAt != null);
    expect(done.status).toBe('done');
    expect(done.progress).toBe(100);
  });

  it('fails a job whose workflow does not exist, once it has had a minute to start', async () => {
    const { job } = await stack.jobs.create(stack.orm.em, {
      kind: 'probe',
      status: 'queued',
      workflowId: `probe:never-started-${randomUUID()}`,
    });
    // Just created: its API process may still be starting the workflow (through a Temporal outage, say).
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('queued');
    await backdate(job.id, 61);
    await stack.reconciler!.runOnce();
    const after = await reload(job.id);
    expect(after.status).toBe('failed');
    expect(after.error).toMatch(/no longer exists in Temporal/);
  });

  it('leaves running and finished jobs alone', async () => {
    const { job } = await launchProbe(stack, 1);
    await until(() => reload(job.id), (j) => j.status === 'running');
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('running');
    await stack.temporal.workflow.getHandle(job.workflowId).signal(advanceSignal, 1);
    await until(() => reload(job.id), (j) => j.status === 'done');
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('done');
  });

  it('keeps one unfinished job per key', async () => {
    const key = randomUUID();
    const first = await launchProbe(stack, 1, key);
    const second = await launchProbe(stack, 1, key);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.job.id).toBe(first.job.id);
    await stack.temporal.workflow.getHandle(first.job.workflowId).signal(advanceSignal, 1);
    await until(() => reload(first.job.id), (j) => j.status === 'done');
    const third = await launchProbe(stack, 1, key);
    expect(third.created).toBe(true);
    expect(third.job.id).not.toBe(first.job.id);
    await stack.temporal.workflow.getHandle(third.job.workflowId).terminate('cleanup');
  });
});

describe('a retry racing the reconciler', () => {
  it('leaves a job a retry has just queued again alone while its new run is being started', async () => {
    const { job } = await launchProbe(stack, 1);
    await stack.temporal.workflow.getHandle(job.workflowId).signal(advanceSignal, 1);
    const done = await until(() => reload(job.id), (j) => j.status === 'done');
    await stack.temporal.workflow.getHandle(job.workflowId).result(); // the previous run has closed

    // The new run's start is held back, so the reconciler looks in between.
    let release: () => void = () => undefined;
    let reached: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const atGate = new Promise<void>((r) => (reached = r));
    const workflow = Object.create(stack.temporal.workflow) as typeof stack.temporal.workflow;
    workflow.start = (async (...a: Parameters<typeof workflow.start>) => {
      reached();
      await gate;
      return stack.temporal.workflow.start(...a);
    }) as typeof workflow.start;
    const temporal = Object.assign(Object.create(stack.temporal) as typeof stack.temporal, { workflow });
    const relaunch = relaunchJob({ em: stack.orm.em.fork(), jobs: stack.jobs, temporal, config: stack.config }, job.id, {
      retryable: (j) => j.status === 'done',
      workflowType: 'probeJobWorkflow',
      queue: 'indexing',
      args: (j) => [j.id, 1],
      subject: job.workflowId,
    });
    await atGate;
    // Queued again, owned by no run yet: nothing the previous run does can write to it.
    expect(await reload(job.id)).toMatchObject({ status: 'queued', runId: null, completedAt: null });
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('queued');

    release();
    const { job: requeued, changed } = await relaunch;
    expect(changed).toBe(true);
    expect(requeued.runId).toBeTruthy();
    expect(requeued.runId).not.toBe(done.runId);
    await until(() => reload(job.id), (j) => j.status === 'running');
    await stack.reconciler!.runOnce();
    expect((await reload(job.id)).status).toBe('running');
    await stack.temporal.workflow.getHandle(job.workflowId).signal(advanceSignal, 1);
    const again = await until(() => reload(job.id), (j) => j.completedAt != null);
    expect(again).toMatchObject({ status: 'done', error: null, runId: requeued.runId });
    // No false ending between the two runs: the stream says done, queued, running, done.
    const statuses = (await readEvents(stack.orm.em.fork(), `job:${job.id}`, 0)).filter((e) => e.event === 'status').map((e) => e.data.status);
    expect(statuses.slice(statuses.lastIndexOf('queued') - 1)).toEqual(['done', 'queued', 'running', 'done']);
  });
});

describe('startup recovery', () => {
  it('fails, at API start, the jobs whose workflow was lost while the service was down', async () => {
    const { job } = await stack.jobs.create(stack.orm.em, {
      kind: 'probe',
      status: 'running',
      workflowId: `probe:lost-${randomUUID()}`,
    });
    await backdate(job.id, 120); // created before the service went down
    // A second API process on the same database: its startup pass runs before it serves anything.
    const second = await startTestStack({ kinds: [probeKind], queues: [], env: { DATABASE_URL: stack.databaseUrl } });
    try {
      const after = await reload(job.id);
      expect(after.status).toBe('failed');
      expect(after.completedAt).not.toBeNull();
    } finally {
      await second.stop();
    }
  });
});
