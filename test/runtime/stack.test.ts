import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { advanceSignal } from '../fixtures/workflows.js';
import { launchProbe, probeKind, probeRoutes } from '../support/probe.js';
import { SseClient } from '../support/sse.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ kinds: [probeKind], routes: [probeRoutes] });
});
afterAll(async () => {
  await stack?.stop();
});

describe('health', () => {
  it('answers /healthz with the database and Temporal checked', async () => {
    const res = await fetch(`${stack.url}/healthz`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.status).toBe('ok');
    expect(body.checks.database.ok).toBe(true);
    expect(body.checks.temporal.ok).toBe(true);
    expect(body.queues).toBeUndefined();
  });

  it('runs a workflow on every task queue with deep=1 and names the worker that answered', async () => {
    const res = await fetch(`${stack.url}/healthz?deep=1`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(Object.keys(body.queues).sort()).toEqual(['indexing', 'recipes', 'transcription']);
    for (const [name, q] of Object.entries<{ ok: boolean; answeredBy: string }>(body.queues)) {
      expect(q.ok).toBe(true);
      expect(q.answeredBy).toContain(`${stack.config.taskQueuePrefix}${name}@`);
    }
  });
});

describe('job progress over SSE', () => {
  it('streams a job, and a reconnect with Last-Event-ID receives exactly the missed events', async () => {
    const { job, created } = await launchProbe(stack, 4);
    expect(created).toBe(true);
    const handle = stack.temporal.workflow.getHandle(job.workflowId);
    const url = `${stack.url}/api/probe/jobs/${job.id}/stream`;

    const first = await SseClient.open(url);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toContain('text/event-stream');
    await first.waitFor((c) => c.events.some((e) => e.event === 'status' && JSON.parse(e.data!).status === 'running'));
    await handle.signal(advanceSignal, 2);
    await first.waitFor((c) => c.events.filter((e) => e.event === 'progress').length === 2);
    first.close();

    // Every message has an id; after the initial state they are the stream's consecutive sequence numbers.
    const [initial, ...rest] = first.events;
    expect(initial!.event).toBe('state');
    expect(initial!.id).toMatch(/^\d+$/);
    const ids = rest.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    const lastSeen = ids.at(-1)!;

    // While nobody listens, the job moves on and finishes.
    await handle.signal(advanceSignal, 4);
    await handle.result();

    const second = await SseClient.open(url, { 'Last-Event-ID': String(lastSeen) });
    await second.waitFor((c) => c.ended);
    const [state2, ...missed] = second.events;
    expect(state2!.event).toBe('state');
    expect(JSON.parse(state2!.data!).status).toBe('done');
    // Exactly what happened after lastSeen: two progress steps and the final status, in order, no duplicates.
    expect(missed.map((e) => Number(e.id))).toEqual([lastSeen + 1, lastSeen + 2, lastSeen + 3]);
    expect(missed.map((e) => e.event)).toEqual(['progress', 'progress', 'status']);
    expect(missed.map((e) => (e.event === 'status' ? JSON.parse(e.data!).status : JSON.parse(e.data!).stage))).toEqual([
      'step-3',
      'step-4',
      'done',
    ]);
  });

  it('sends heartbeats as comments while a job is idle', async () => {
    const { job } = await launchProbe(stack, 1);
    const client = await SseClient.open(`${stack.url}/api/probe/jobs/${job.id}/stream`);
    await client.waitFor((c) => c.frames.some((f) => f.comment === 'ping'));
    client.close();
    await stack.temporal.workflow.getHandle(job.workflowId).signal(advanceSignal, 1);
  });

  it('answers 404 with a stable code for an unknown job', async () => {
    const res = await fetch(`${stack.url}/api/probe/jobs/nope/stream`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: 'Job nope not found', code: 'JOB_NOT_FOUND' });
  });
});
