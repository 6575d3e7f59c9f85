import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { createTranscriptionActivities } from '../../transcription/activities.js';
import { TranscriptionWebhook } from '../../transcription/entities.js';
import { readEvents } from '../../jobs/events.js';
import { json, type Json } from '../support/http.js';
import { BrowserSubscriber, verifyVapid } from '../../fakes/push-service.js';
import { SseClient } from '../support/sse.js';
import { getJob, isFinished, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

let h: TranscriptionHarness;
let browser: BrowserSubscriber;
beforeAll(async () => {
  h = await startTranscriptionHarness();
  browser = new BrowserSubscriber(`${h.push.url}/push/browser-1`);
  const res = await fetch(`${h.url}/api/notifications/subscribe`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ clientId: 'client-1', subscription: browser.toJSON() }),
  });
  expect(await json(res)).toEqual({ success: true, subscriptionCount: 1 });
});
afterAll(() => h?.stop());

const events = async (jobId: string): Promise<Json[]> =>
  (await readEvents(h.stack.orm.em.fork(), `job:${jobId}`, 0)).map((e) => ({ event: e.event, ...e.data }));
const uploads = (jobId: string) => path.join(h.stack.dataDir, 'uploads', jobId);
const exists = (p: string) => fs.stat(p).then(() => true, () => false);

/** Rolling echoes, as a streaming recogniser reports growing hypotheses. */
const echoSegments = [
  { start: 0, end: 2, text: 'welcome to the show' },
  { start: 1.5, end: 3.5, text: 'to the show today we talk' },
  { start: 3.5, end: 3.51, text: 'today we talk' },
  { start: 3.51, end: 6, text: 'today we talk about durable workflows' },
  { start: 6, end: 8, text: 'no no' },
];

describe('an upload, transcribed by the backend', () => {
  it('goes pending -> processing -> 90 -> done, stores a deduplicated transcript, writes four files, notifies, cleans up', async () => {
    const audio = smallWav(2);
    const created = await uploadJob(h.url, { bytes: audio, name: 'My Talk.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body).toMatchObject({ title: 'My Talk', status: 'pending', source: 'upload', fileName: 'My Talk.wav', mode: 'none', progress: 0 });

    const sse = await SseClient.open(`${h.url}/api/jobs/${id}/events`);
    const submission = await h.asr.waitForJob(id);
    expect(submission).toMatchObject({ isWav: true, fileName: `${id}.wav`, fileType: 'audio/wav' });
    expect(submission.callbackUrl).toMatch(new RegExp(`^${h.url}/api/webhooks/asr/${id}\\?token=[A-Za-z0-9_-]{43}$`));
    // 16 kHz mono 16-bit: 32 000 bytes a second, plus the header.
    expect(submission.bytes).toBe(44 + 2 * 32_000);
    const processing = await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    expect(processing).toMatchObject({ status: 'processing', progress: 50, asrJobId: submission.id, appliedMode: 'none' });

    const answer = await h.asr.complete(submission, echoSegments);
    expect(answer).toEqual({ status: 200, body: { ok: true } });

    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'done', progress: 100, error: null, transcript_source: 'asr', segmentCount: 4 });
    expect(job.segments.map((s: { text: string }) => s.text)).toEqual(['welcome to the show', 'today we talk', 'about durable workflows', 'no no']);
    expect(job.segments[1]).toEqual({ id: 2, start: 2, end: 3.5, text: 'today we talk' });
    expect(job.outputDir).toBe(path.join(h.stack.dataDir, 'transcripts', id));

    // The event stream: the current state first, then each change, 90 before done, and it closes after `done`.
    await sse.waitFor((c) => c.ended);
    const names = sse.events.map((f) => [f.event, JSON.parse(f.data!)]);
    expect(names[0]).toEqual(['status', expect.objectContaining({ status: 'pending' })]);
    const statusEvents = names.filter(([e]) => e === 'status').map(([, d]) => [d.status, d.progress]);
    expect(statusEvents).toContainEqual(['processing', 90]);
    expect(statusEvents.at(-1)).toEqual(['done', 100]);
    expect(names.at(-1)).toEqual(['done', expect.objectContaining({ jobId: id, status: 'done' })]);
    expect(statusEvents.findIndex(([s, p]) => s === 'processing' && p === 90)).toBeLessThan(statusEvents.length - 1);

    // The files, each with a download name.
    const srt = await fetch(`${h.url}/api/jobs/${id}/files/srt`);
    expect(srt.status).toBe(200);
    expect(srt.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(srt.headers.get('content-disposition')).toBe('attachment; filename="My-Talk.srt"');
    // Subtitle cues cut from the segments (transcription/transcripts/cues.ts), not the segments themselves.
    expect(await srt.text()).toMatch(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\nwelcome to the show/);
    const vtt = await fetch(`${h.url}/api/jobs/${id}/files/vtt`);
    expect([vtt.status, vtt.headers.get('content-type'), vtt.headers.get('content-disposition')]).toEqual([200, 'text/vtt; charset=utf-8', 'attachment; filename="My-Talk.vtt"']);
    expect(await vtt.text()).toMatch(/^WEBVTT\n\n1\n00:00:00\.000 --> /);
    const md = await fetch(`${h.url}/api/jobs/${id}/files/md`);
    expect(await md.text()).toMatch(/^# My Talk\n/);
    const txt = await (await fetch(`${h.url}/api/jobs/${id}/files/txt`)).text();
    expect(txt).toBe('welcome to the show today we talk about durable workflows no no\n');
    const fileJson = await json(await fetch(`${h.url}/api/jobs/${id}/files/json`));
    expect(fileJson).toMatchObject({ title: 'My Talk', transcript_source: 'asr', segments: job.segments });
    expect((await fetch(`${h.url}/api/jobs/${id}/files/pdf`)).status).toBe(400);

    // The push notification, decrypted as the browser would.
    const [request] = await h.push.waitForRequests(1);
    expect(request!.path).toBe('/push/browser-1');
    expect(request!.headers['content-encoding']).toBe('aes128gcm');
    expect(verifyVapid(request!.headers.authorization as string, h.push.url).key).toBe(
      (await json(await fetch(`${h.url}/api/notifications/vapid-key`))).publicKey,
    );
    const notification = JSON.parse(browser.decrypt(request!.body));
    expect(notification).toMatchObject({ title: 'Transcript ready', body: 'My Talk', data: { kind: 'transcription', jobId: id } });

    // Temp files and the upload are gone once the job is done.
    await expect.poll(() => exists(uploads(id))).toBe(false);
    await expect.poll(() => exists(path.join(h.stack.dataDir, 'tmp', 'transcription', id))).toBe(false);

    // A replay of the same webhook changes nothing.
    const replay = await h.asr.complete(submission, [{ start: 0, end: 1, text: 'something else entirely' }]);
    expect(replay).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, id)).segments).toEqual(job.segments);

    // Streams of a finished job: the end state at once; a resumed one replays what it missed; one that saw it all: 204.
    const again = await SseClient.open(`${h.url}/api/jobs/${id}/events`);
    await again.waitFor((c) => c.ended);
    expect(again.events.map((f) => f.event)).toEqual(['status', 'done']);
    const all = await readEvents(h.stack.orm.em.fork(), `job:${id}`, 0);
    const resumed = await SseClient.open(`${h.url}/api/jobs/${id}/events`, { 'Last-Event-ID': String(all.at(-3)!.seq) });
    await resumed.waitFor((c) => c.ended);
    expect(resumed.events.map((f) => [Number(f.id), f.event])).toEqual(all.slice(-2).map((e) => [e.seq, e.event]));
    const seen = await fetch(`${h.url}/api/jobs/${id}/events`, { headers: { 'Last-Event-ID': String(all.at(-1)!.seq) } });
    expect(seen.status).toBe(204);
  });
});

/** An upload job that reached the backend: its id and the backend's submission. */
async function submitted(name = 'clip.wav', fields: Record<string, string> = { mode: 'none' }) {
  const created = await uploadJob(h.url, { bytes: smallWav(1), name }, fields);
  expect(created.status).toBe(201);
  const submission = await h.asr.waitForJob(created.body.id);
  await waitForJob(h.url, created.body.id, (j) => j.stage === 'transcribing');
  return { id: created.body.id as string, submission };
}

const webhookUrl = (id: string, token?: string) => `${h.url}/api/webhooks/asr/${id}${token === undefined ? '' : `?token=${token}`}`;
const post = async (url: string, body: unknown) => {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await json(res) };
};

describe('the webhook answers as the spec says', () => {
  it('404 for an unknown job, and for a missing or wrong token (which changes nothing)', async () => {
    expect(await post(webhookUrl('3f1e3a50-0000-4000-8000-000000000000', 'x'), { status: 'completed' })).toEqual({
      status: 404,
      body: { ok: false, error: 'Job not found' },
    });
    expect((await post(webhookUrl('not-a-uuid', 'x'), { status: 'completed' })).status).toBe(404);

    const { id, submission } = await submitted();
    const token = new URL(submission.callbackUrl).searchParams.get('token')!;
    const forged = { id: submission.id, status: 'completed', segments: [{ start: 0, end: 1, text: 'forged words here' }] };
    expect(await post(webhookUrl(id), forged)).toEqual({ status: 404, body: { ok: false, error: 'Job not found' } });
    expect((await post(webhookUrl(id, `${token.slice(0, -2)}xx`), forged)).status).toBe(404);
    expect((await post(webhookUrl(id, ''), forged)).status).toBe(404);
    const after = await getJob(h.url, id);
    expect(after).toMatchObject({ status: 'processing', stage: 'transcribing', segments: [] });

    // The genuine call still works.
    expect(await h.asr.complete(submission, [{ start: 0, end: 1, text: 'the real words' }])).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, id)).segments.map((s: { text: string }) => s.text)).toEqual(['the real words']);
  });

  it('ignores model-lifecycle and progress calls: a warm-up never finishes a job', async () => {
    const { id, submission } = await submitted();
    expect(await h.asr.modelLifecycle(submission)).toEqual({ status: 200, body: { ok: true } });
    expect(await h.asr.callback(submission, { event: 'model.ready', model: 'large-v3' })).toEqual({ status: 200, body: { ok: true } });
    expect(await h.asr.callback(submission, { state: 'loaded' })).toEqual({ status: 200, body: { ok: true } });
    expect(await h.asr.callback(submission, { id: submission.id, status: 'processing', progress: 40 })).toEqual({ status: 200, body: { ok: true } });
    expect(await getJob(h.url, id)).toMatchObject({ status: 'processing', stage: 'transcribing', progress: 50 });
    const rows = await h.stack.orm.em.fork().find(TranscriptionWebhook, { jobId: id });
    expect(rows).toEqual([]);
    await h.asr.complete(submission);
    expect((await getJob(h.url, id)).status).toBe('done');
  });

  it('backend `failed` fails the job with the backend error; the upload is kept for a retry', async () => {
    const { id, submission } = await submitted('fails.wav');
    expect(await h.asr.fail(submission, 'CUDA out of memory')).toEqual({ status: 200, body: { ok: true } });
    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'failed', error: 'CUDA out of memory', segments: [], transcript_source: null });
    const evs = await events(id);
    expect(evs.slice(-3)).toEqual([
      expect.objectContaining({ event: 'status', status: 'failed', error: 'CUDA out of memory' }),
      expect.objectContaining({ event: 'error', message: 'CUDA out of memory' }),
      expect.objectContaining({ event: 'done', status: 'failed' }),
    ]);
    await expect.poll(() => exists(path.join(h.stack.dataDir, 'tmp', 'transcription', id))).toBe(false);
    expect(await fs.readdir(uploads(id))).toEqual(['source.wav']);
  });

  it('backend `cancelled` without an error fails the job with a message naming the status', async () => {
    const { id, submission } = await submitted();
    expect(await h.asr.fail(submission, undefined, 'cancelled')).toEqual({ status: 200, body: { ok: true } });
    const job = await getJob(h.url, id);
    expect(job.status).toBe('failed');
    expect(job.error).toBe('The transcription backend reported the job cancelled (status "cancelled")');
  });

  it('a stale call (for an earlier backend job) and a replay change nothing', async () => {
    const { id, submission } = await submitted();
    const stale = await h.asr.callback(submission, { id: 'asr-earlier', status: 'completed', segments: [{ start: 0, end: 1, text: 'stale words' }] });
    expect(stale).toEqual({ status: 200, body: { ok: true } });
    expect(await getJob(h.url, id)).toMatchObject({ status: 'processing', segments: [] });
    await h.asr.complete(submission, [{ start: 0, end: 1, text: 'current words' }]);
    const done = await getJob(h.url, id);
    for (const body of [
      { id: submission.id, status: 'failed', error: 'late failure' },
      { id: submission.id, status: 'completed', segments: [] },
    ]) {
      expect(await h.asr.callback(submission, body)).toEqual({ status: 200, body: { ok: true } });
    }
    const after = await getJob(h.url, id);
    expect(after).toMatchObject({ status: 'done', error: null, segments: done.segments });
    expect(after.updatedAt).toBe(done.updatedAt);
  });

  it('500 {ok:false, error} when handling the result fails, and the job is failed with an error event', async () => {
    const { id, submission } = await submitted();
    // The transcripts folder cannot be created: writing the files fails.
    const transcripts = path.join(h.stack.dataDir, 'transcripts');
    await fs.rm(transcripts, { recursive: true, force: true });
    await fs.writeFile(transcripts, 'in the way');
    try {
      const answer = await h.asr.complete(submission);
      expect(answer.status).toBe(500);
      expect(answer.body.ok).toBe(false);
      expect(answer.body.error).toMatch(/^Could not process the transcription backend's result: .*(ENOTDIR|EEXIST)/);
      const job = await getJob(h.url, id);
      expect(job).toMatchObject({ status: 'failed', error: answer.body.error, segments: [], outputDir: null });
      const evs = await events(id);
      expect(evs.map((e) => e.event).slice(-3)).toEqual(['status', 'error', 'done']);
      expect(evs.at(-2)).toMatchObject({ message: answer.body.error });
      const [row] = await h.stack.orm.em.fork().find(TranscriptionWebhook, { jobId: id });
      expect(row).toMatchObject({ outcome: 'error', payload: null });
    } finally {
      await fs.rm(transcripts, { force: true });
    }
  });
});

describe('the submit step run again after its attempt recorded the backend job', () => {
  // The attempt's completion never reached Temporal (the server or its database away), so Temporal runs the step
  // again: it must answer the recorded job, not submit a second one under a new token.
  it('answers the recorded backend job: one submission, the stage kept, and that job\'s result finishes the job', async () => {
    const { id, submission } = await submitted('again.wav');
    const job = await h.stack.orm.em.fork().findOneOrFail(Job, { id });
    const activities = createTranscriptionActivities({ ...h.stack, log: createLogger('silent') });
    const again = await new MockActivityEnvironment({ attempt: 2 }).run(activities.transcriptionSubmit, {
      jobId: id,
      runId: job.runId!,
      audio: 'no-such-file.wav',
      note: { progress: 40, stage: 'submitting', stageDetail: 'Submitting none audio' },
    });
    expect(again).toEqual({ kind: 'accepted', asrJobId: submission.id });
    expect(h.asr.jobs.filter((j) => j.externalId === id)).toHaveLength(1);
    expect(await getJob(h.url, id)).toMatchObject({ status: 'processing', stage: 'transcribing', asrJobId: submission.id });
    expect(await h.asr.complete(submission, [{ start: 0, end: 1, text: 'first words' }])).toMatchObject({ status: 200 });
    expect(await waitForJob(h.url, id, isFinished)).toMatchObject({ status: 'done', segments: [{ text: 'first words' }] });
  });
});

describe('an operator terminating the workflow in the Temporal UI', () => {
  it('fails the job through the reconciler, with the same error and done events; a late webhook changes nothing', async () => {
    const { id, submission } = await submitted();
    const { Job } = await import('../../db/entities/job.js');
    const row = await h.stack.orm.em.fork().findOneOrFail(Job, { id });
    await h.stack.temporal.workflow.getHandle(row.workflowId).terminate('stuck, says the operator');
    expect(await h.stack.reconciler!.runOnce()).toBeGreaterThanOrEqual(1);
    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'failed', error: 'Terminated in Temporal: stuck, says the operator' });
    expect((await events(id)).slice(-3)).toEqual([
      expect.objectContaining({ event: 'status', status: 'failed' }),
      expect.objectContaining({ event: 'error', message: job.error }),
      expect.objectContaining({ event: 'done', status: 'failed' }),
    ]);
    expect(await h.asr.complete(submission)).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, id)).status).toBe('failed');
  });
});

describe('cancel', () => {
  it('cancels an active job at once, cancels the backend job, and a later webhook stores nothing', async () => {
    const { id, submission } = await submitted();
    const sse = await SseClient.open(`${h.url}/api/jobs/${id}/events`);
    const res = await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id, status: 'cancelled', error: 'Cancelled', asrJobId: submission.id });
    await h.asr.waitFor(() => h.asr.cancels.includes(submission.id), 15_000, 'the backend cancel');
    await sse.waitFor((c) => c.ended);
    expect(sse.events.at(-1)).toMatchObject({ event: 'done' });
    expect(JSON.parse(sse.events.at(-1)!.data!)).toMatchObject({ status: 'cancelled' });

    expect(await h.asr.complete(submission)).toEqual({ status: 200, body: { ok: true } });
    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'cancelled', segments: [], transcript_source: null, outputDir: null, files: null });
    expect(await exists(path.join(h.stack.dataDir, 'transcripts', id))).toBe(false);

    // Cancelling again answers the job as it is; a finished job cannot be cancelled.
    expect((await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' })).status).toBe(200);
    const done = await submitted();
    await h.asr.complete(done.submission);
    const conflict = await fetch(`${h.url}/api/jobs/${done.id}`, { method: 'DELETE' });
    expect(conflict.status).toBe(409);
    expect(await json(conflict)).toMatchObject({ code: 'JOB_NOT_ACTIVE' });
    expect((await fetch(`${h.url}/api/jobs/3f1e3a50-0000-4000-8000-000000000000`, { method: 'DELETE' })).status).toBe(404);
  });

  it('cancels a job right after it was created; anything it got to submit is cancelled at the backend', async () => {
    const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'early.wav' }, { mode: 'none' });
    const id = created.body.id;
    const res = await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' });
    expect(await json(res)).toMatchObject({ status: 'cancelled' });
    const { Job } = await import('../../db/entities/job.js');
    const row = await h.stack.orm.em.fork().findOneOrFail(Job, { id });
    await expect.poll(async () => (await h.stack.temporal.workflow.getHandle(row.workflowId).describe()).status.name, { timeout: 15_000 }).not.toBe('RUNNING');
    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'cancelled', progress: 0, segments: [] });
    for (const s of h.asr.jobs.filter((j) => j.externalId === id)) expect(h.asr.cancels).toContain(s.id);
    // Its run never revived it, and its temporary files are gone.
    const statuses = (await events(id)).filter((e) => e.event === 'status').map((e) => e.status);
    expect(statuses[0]).toBe('pending');
    expect(statuses.indexOf('cancelled')).toBe(statuses.length - 1);
    expect(await exists(path.join(h.stack.dataDir, 'tmp', 'transcription', id))).toBe(false);
  });

  it('a webhook arriving for a locally cancelled job is answered 200 and nothing is stored', async () => {
    const { id, submission } = await submitted();
    await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' });
    const before = await events(id);
    expect(await h.asr.complete(submission, [{ start: 0, end: 1, text: 'too late' }])).toEqual({ status: 200, body: { ok: true } });
    expect(await h.asr.fail(submission, 'too late')).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, id)).status).toBe('cancelled');
    expect((await events(id)).length).toBe(before.length);
    await h.push.waitForRequests(0);
  });
});

describe('retry', () => {
  it('404 for an unknown job, 409 for a done job', async () => {
    expect((await fetch(`${h.url}/api/jobs/3f1e3a50-0000-4000-8000-000000000000/retry`, { method: 'POST' })).status).toBe(404);
    const { id, submission } = await submitted();
    const conflict = await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' });
    expect(conflict.status).toBe(409);
    expect(await json(conflict)).toMatchObject({ code: 'JOB_NOT_RETRYABLE' });
    await h.asr.complete(submission);
    expect((await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' })).status).toBe(409);
  });

  it.each([
    ['a failed .webm recording', 'webm', 'recording', 'fail'],
    ['a cancelled .mp3 upload', 'mp3', 'upload', 'cancel'],
  ])('re-runs %s from the persisted file', async (_name, ext, source, how) => {
    const media = await encode(smallWav(2), ext);
    const created = await uploadJob(h.url, { bytes: media, name: `take.${ext}`, type: ext === 'mp3' ? 'audio/mpeg' : 'audio/webm' }, { source, mode: 'standard' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body.source).toBe(source);
    const first = await h.asr.waitForJob(id);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    if (how === 'fail') await h.asr.fail(first, 'backend crashed');
    else expect((await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' })).status).toBe(200);
    await waitForJob(h.url, id, isFinished);
    expect(await fs.readdir(uploads(id))).toEqual([`source.${ext}`]);

    const retried = await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    expect(await json(retried)).toMatchObject({ id, status: 'pending', error: null, asrJobId: null, runs: 2 });
    expect((await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' })).status).toBe(409);
    const second = await h.asr.waitFor(() => h.asr.jobs.filter((j) => j.externalId === id)[1], 20_000, 'a second submission');
    expect(second.id).not.toBe(first.id);
    // The same persisted file, converted the same way again.
    expect(second.sha256).toBe(first.sha256);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    expect(await h.asr.complete(second, [{ start: 0, end: 2, text: 'second time lucky' }])).toEqual({ status: 200, body: { ok: true } });
    const job = await getJob(h.url, id);
    expect(job).toMatchObject({ status: 'done', appliedMode: 'standard', asrJobId: second.id, transcript_source: 'asr', runs: 2 });
    await expect.poll(() => exists(uploads(id))).toBe(false);
    const evs = await events(id);
    expect(evs.filter((e) => e.event === 'done').map((e) => e.status)).toEqual([how === 'fail' ? 'failed' : 'cancelled', 'done']);
  });
});

describe('creating jobs', () => {
  it('validates JSON bodies', async () => {
    const create = (body: unknown) => post(`${h.url}/api/jobs`, body);
    const bad = await create({ url: 'ftp://example.com/x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ pointer: '/body/url' })] });
    expect((await create({})).body.details).toEqual([{ pointer: '/body/url', message: 'is required' }]);
    expect((await create({ url: 'https://example.com/v', mode: 'loud' })).body.details[0].pointer).toBe('/body/mode');
    expect((await create({ url: 'https://example.com/v', extra: 1 })).status).toBe(400);
    const text = await fetch(`${h.url}/api/jobs`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'https://example.com' });
    expect(text.status).toBe(415);
  });

  it('refuses uploads that are too large (413, nothing kept), not media (415), empty or missing (400)', async () => {
    const uploadsDir = path.join(h.stack.dataDir, 'uploads');
    const before = await fs.readdir(uploadsDir).catch(() => []);
    const tooLarge = await uploadJob(h.url, { bytes: Buffer.alloc(500 * 1024, 1), name: 'big.wav' });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ code: 'UPLOAD_TOO_LARGE' });
    const notMedia = await uploadJob(h.url, { bytes: Buffer.from('hello'), name: 'notes.txt', type: 'text/plain' });
    expect(notMedia.status).toBe(415);
    const empty = await uploadJob(h.url, { bytes: Buffer.alloc(0), name: 'empty.wav' });
    expect(empty.status).toBe(400);
    const form = new FormData();
    form.set('title', 'no file');
    const missing = await fetch(`${h.url}/api/jobs`, { method: 'POST', body: form });
    expect(missing.status).toBe(400);
    expect((await json(missing)).details).toEqual([{ pointer: '/body/file', message: 'is required' }]);
    const badMode = await uploadJob(h.url, { bytes: smallWav(1), name: 'x.wav' }, { mode: 'loud' });
    expect(badMode.status).toBe(400);
    // A body declared far over the limit is refused before it is read, and the connection closed.
    const early = await rawUpload(3 * 1024 * 1024);
    expect(early).toMatchObject({ status: 413, connection: 'close' });
    expect(JSON.parse(early.body)).toMatchObject({ code: 'UPLOAD_TOO_LARGE' });
    // No partial file and no stray folder is left behind.
    expect(await fs.readdir(uploadsDir).catch(() => [])).toEqual(before);
  });

  it('takes blank form fields as not given', async () => {
    const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'Blank Fields.wav' }, { title: '', mode: '' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Blank Fields', mode: 'auto', source: 'upload' });
    expect((await fetch(`${h.url}/api/jobs/${created.body.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('lists jobs newest first, by status, a page at a time', async () => {
    const all = await json(await fetch(`${h.url}/api/jobs?limit=200`));
    expect(all.total).toBeGreaterThanOrEqual(5);
    expect(all.items.length).toBe(all.total);
    const times = all.items.map((j: { createdAt: string }) => j.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.items[0].segments).toBeUndefined();

    const page = await json(await fetch(`${h.url}/api/jobs?limit=2&offset=1`));
    expect(page).toMatchObject({ total: all.total, limit: 2, offset: 1, hasMore: all.total > 3 });
    expect(page.items.map((j: { id: string }) => j.id)).toEqual(all.items.slice(1, 3).map((j: { id: string }) => j.id));

    const failed = await json(await fetch(`${h.url}/api/jobs?status=failed`));
    expect(failed.items.length).toBeGreaterThan(0);
    expect(failed.items.every((j: { status: string }) => j.status === 'failed')).toBe(true);
    expect((await fetch(`${h.url}/api/jobs?status=weird`)).status).toBe(400);
    expect((await fetch(`${h.url}/api/jobs?limit=0`)).status).toBe(400);
    expect((await fetch(`${h.url}/api/jobs/3f1e3a50-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await fetch(`${h.url}/api/jobs/nope`)).status).toBe(404);
  });

  it('streams every job on /api/jobs/events, and documents the API', async () => {
    const sse = await SseClient.open(`${h.url}/api/jobs/events`);
    const { id, submission } = await submitted();
    await h.asr.complete(submission);
    await sse.waitFor((c) => c.events.some((f) => f.event === 'done' && JSON.parse(f.data!).jobId === id));
    sse.close();
    const doc = await json(await fetch(`${h.url}/api/openapi.json`));
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/jobs', '/api/jobs/{id}', '/api/jobs/{id}/events', '/api/jobs/{id}/files/{format}', '/api/jobs/{id}/retry', '/api/webhooks/asr/{jobId}', '/api/notifications/subscribe', '/api/notifications/vapid-key']));
    expect(Object.keys(doc.paths['/api/jobs'].post.requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
  });

  it('takes webhook bodies larger than BODY_LIMIT (long transcripts)', async () => {
    const { id, submission } = await submitted();
    const segments = Array.from({ length: 15_000 }, (_, i) => ({ start: i, end: i + 1, text: `segment ${i} with a few more words to make it long` }));
    expect(JSON.stringify(segments).length).toBeGreaterThan(1024 * 1024);
    expect(await h.asr.complete(submission, segments)).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, id)).segmentCount).toBe(15_000);
  });
});

/** Real .webm (Opus) and .mp3 files, encoded by the same ffmpeg the service uses. */
async function encode(wavBytes: Buffer, ext: string): Promise<Buffer> {
  const { findFfmpeg } = await import('../../core/tools.js');
  const { createLogger } = await import('../../core/log.js');
  const { runTool } = await import('../../transcription/media.js');
  const ffmpeg = await findFfmpeg(createLogger('silent'));
  const dir = await fs.mkdtemp(path.join(h.stack.dataDir, 'enc-'));
  await fs.writeFile(path.join(dir, 'in.wav'), wavBytes);
  const codec = ext === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '64k'] : ['-c:a', 'libopus', '-b:a', '32k'];
  await runTool(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-i', path.join(dir, 'in.wav'), ...codec, path.join(dir, `out.${ext}`)], {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    timeoutMs: 30_000,
  });
  const out = await fs.readFile(path.join(dir, `out.${ext}`));
  await fs.rm(dir, { recursive: true, force: true });
  return out;
}

describe('determinism', () => {
  it('replays the histories of finished jobs with the current workflow code', async () => {
    const { Worker } = await import('@temporalio/worker');
    const { workflowBundle } = await import('../../runtime/worker.js');
    const { Job } = await import('../../db/entities/job.js');
    const jobs = await h.stack.orm.em.fork().find(Job, { kind: 'transcription', completedAt: { $ne: null } }, { limit: 4, orderBy: { createdAt: 'asc' } });
    expect(jobs.length).toBe(4);
    const histories = await Promise.all(
      jobs.map(async (j) => ({ workflowId: j.workflowId, history: await h.stack.temporal.workflow.getHandle(j.workflowId).fetchHistory() })),
    );
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle(), replayName: 'transcription' }, histories);
    for await (const r of results) expect(r.error).toBeUndefined();
  });
});

/** A multipart upload of `bytes` bytes by a client that reads the answer as soon as it comes (as curl does). */
function rawUpload(bytes: number): Promise<{ status: number; connection: string | undefined; body: string }> {
  const boundary = 'gristmill-test-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${h.url}/api/jobs`, {
      method: 'POST',
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + bytes + tail.length },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.write(head);
    // The rest may never be read: the server answers first.
    req.end(Buffer.concat([Buffer.alloc(bytes, 1), tail]));
  });
}
