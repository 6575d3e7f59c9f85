import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * The backend's webhook is authenticated before its body is read (before: the route parsed up to 50 MB for any job
 * id before it checked the job and the token). Only a job waiting for its result takes a body over BODY_LIMIT.
 */
let h: TranscriptionHarness;
beforeAll(async () => {
  h = await startTranscriptionHarness({ env: { BODY_LIMIT: '64kb', ASR_WEBHOOK_BODY_LIMIT: '10mb' } });
});
afterAll(() => h?.stop());

/**
 * Sends the headers of an 8 MB body (within ASR_WEBHOOK_BODY_LIMIT) and nothing more: an answer can only come from a
 * server that decided without reading the body.
 */
function answerBeforeBody(path: string): Promise<{ status: number; body: string; connection: string | undefined }> {
  const url = new URL(h.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path,
      headers: { 'Content-Type': 'application/json', 'Content-Length': 8 * 1024 * 1024 },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to ${path} while its body was unsent`));
    }, 10_000);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection });
      });
    });
    req.on('error', () => undefined);
    req.flushHeaders();
  });
}

const segmentsBody = (id: string, bytes: number) => {
  const words = 'word '.repeat(40);
  const segments = Array.from({ length: Math.ceil(bytes / (words.length + 60)) }, (_, i) => ({ start: i, end: i + 1, text: `segment ${i} ${words}` }));
  return JSON.stringify({ id, status: 'completed', segments });
};

describe('the transcription webhook', () => {
  it('refuses an unknown job at once, without reading its body', async () => {
    const res = await answerBeforeBody('/api/webhooks/asr/00000000-0000-4000-8000-000000000000?token=whatever');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ ok: false, error: 'Job not found' });
    expect(res.connection).toBe('close');
    const notUuid = await answerBeforeBody('/api/webhooks/asr/not-a-job');
    expect(notUuid.status).toBe(404);
  });

  it('refuses a wrong token for a real job at once; takes a large result from the right one; then only small calls', async () => {
    const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'a.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const submission = await h.asr.waitForJob(id);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');

    const wrong = await answerBeforeBody(`/api/webhooks/asr/${id}?token=${'A'.repeat(43)}`);
    expect(wrong.status).toBe(404);
    const none = await answerBeforeBody(`/api/webhooks/asr/${id}`);
    expect(none.status).toBe(404);

    // Waiting for its result: a body over BODY_LIMIT (64 kb) but within ASR_WEBHOOK_BODY_LIMIT is taken.
    const large = segmentsBody(submission.id, 300 * 1024);
    expect(large.length).toBeGreaterThan(256 * 1024);
    const accepted = await fetch(submission.callbackUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: large });
    expect(accepted.status).toBe(200);
    expect(await json(accepted)).toEqual({ ok: true });
    const done = await waitForJob(h.url, id, (j) => j.status === 'done');
    expect(done.segmentCount).toBeGreaterThan(100);

    // Ended: a replay is acknowledged, but only within BODY_LIMIT.
    const replay = await fetch(submission.callbackUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: large });
    expect(replay.status).toBe(413);
    expect(await json(replay)).toMatchObject({ ok: false });
    const small = await fetch(submission.callbackUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: submission.id, status: 'completed', segments: [] }),
    });
    expect(small.status).toBe(200);
    expect((await waitForJob(h.url, id, (j) => j.status === 'done')).segmentCount).toBe(done.segmentCount);
  });
});
