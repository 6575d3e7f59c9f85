import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { attemptDir, withRunContext } from '../../transcription/activity-deps.js';
import { runDir } from '../../transcription/paths.js';

/** The helpers every transcription step uses, run in Temporal's mock activity context (no worker, no server). */
const d = { config: { dataDir: '/data' } };
const ref = { jobId: 'job-1', runId: 'run-1' };

describe('attemptDir', () => {
  it("is the attempt's own folder under its run's, named by the attempt Temporal runs", async () => {
    const env = new MockActivityEnvironment({ attempt: 3 });
    const dir = await env.run(async () => attemptDir(d, ref, 'chunks'));
    expect(dir).toBe(path.join(runDir('/data', 'job-1', 'run-1'), 'chunks-3'));
  });

  it('fails outside an activity rather than guessing an attempt', () => {
    expect(() => attemptDir(d, ref, 'chunks')).toThrow('Activity context not initialized');
  });
});

describe('withRunContext', () => {
  it("resumes from the previous attempt's heartbeat, and heartbeats carry the checkpoint with the progress", async () => {
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { downloadDir: 'work/job-1/run-1/download-1' } });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const resumed = await env.run(() =>
      withRunContext(60_000, async (ctx) => {
        ctx.checkpoint?.({ downloadDir: 'work/job-1/run-1/download-2' });
        ctx.heartbeat('12%');
        ctx.heartbeat();
        return ctx.resumeFrom;
      }),
    );
    expect(resumed).toEqual({ downloadDir: 'work/job-1/run-1/download-1' });
    expect(beats).toEqual([
      { downloadDir: 'work/job-1/run-1/download-2' },
      { downloadDir: 'work/job-1/run-1/download-2', progress: '12%' },
      { downloadDir: 'work/job-1/run-1/download-2' },
    ]);
  });

  it("aborts the step's signal when the activity is cancelled", async () => {
    const env = new MockActivityEnvironment();
    const seen = env.run(() =>
      withRunContext(60_000, (ctx) => new Promise<string>((resolve) => ctx.signal.addEventListener('abort', () => resolve('aborted')))),
    );
    env.cancel();
    await expect(seen).resolves.toBe('aborted');
  });
});
