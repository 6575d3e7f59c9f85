import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Job } from '../../db/entities/job.js';
import { readEvents } from '../../jobs/events.js';
import { resetTranscriptionCapabilities } from '../../transcription/backends/openai.js';
import { type Json } from '../support/http.js';
import { tones } from '../../fakes/media.js';
import { getJob, isFinished, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Jobs transcribed by synchronous backends, end to end: the API, Temporal, the worker, ffmpeg and the fake
 * speaking OpenAI's protocol (and, below, whisper.cpp's and whisper-asr-webservice's).
 */
const KEY = 'sk-test-asr-key-0123456789';
let h: TranscriptionHarness;
beforeAll(async () => {
  h = await startTranscriptionHarness({
    env: {
      ASR_BACKEND: 'openai',
      ASR_API_KEY: KEY,
      ASR_MODEL: 'whisper-large-v3-turbo',
      // 4.8 s of 16 kHz audio a request: a 12-second upload goes in three chunks.
      ASR_CHUNK_MAX_BYTES: '150kb',
      TRANSCRIPTION_MAX_RESUBMITS: '3',
    },
  });
  h.asr.apiKey = KEY;
  // Like OpenAI's 25 MB, the fake refuses a request over the limit (plus the form's few hundred bytes) with a 413.
  h.asr.maxRequestBytes = 150 * 1024 + 1024;
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.asr.syncScript.length = 0;
  h.asr.syncDelayMs = 0;
  h.asr.setModel('ready');
  h.asr.retryAfterSeconds = 1;
  resetTranscriptionCapabilities();
});

/** Twelve 0.6 s tones, one starting at each whole second, each its own pitch (300, 350, ... 850 Hz). */
const twelveTones = () => tones(Array.from({ length: 12 }, (_, k) => [{ hz: 300 + 50 * k, seconds: 0.6 }, { seconds: 0.4 }]).flat());

const requestsOf = (id: string) => h.asr.syncRequests.filter((r) => r.fileName.startsWith(id));
const events = async (jobId: string): Promise<Json[]> =>
  (await readEvents(h.stack.orm.em.fork(), `job:${jobId}`, 0)).map((e) => ({ event: e.event, ...e.data }));

async function start(bytes: Buffer, name = 'talk.wav'): Promise<string> {
  const created = await uploadJob(h.url, { bytes, name }, { mode: 'none' });
  expect(created.status).toBe(201);
  return created.body.id;
}

describe('an OpenAI-compatible backend', () => {
  it('splits long audio at silences under ASR_CHUNK_MAX_BYTES, sends each chunk, and stitches the segments at their times', async () => {
    const id = await start(twelveTones(), 'Twelve tones.wav');
    const job = await waitForJob(h.url, id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'done', progress: 100, error: null, transcript_source: 'asr', asrBackend: 'openai', asrModel: 'whisper-large-v3-turbo', asrJobId: null, segmentCount: 12 });

    // Every tone where it was in the whole file, whichever chunk it went in.
    expect(job.segments).toHaveLength(12);
    job.segments.forEach((s: { start: number; end: number; text: string }, k: number) => {
      expect(s.text).toBe(`tone ${300 + 50 * k} hertz`);
      expect(Math.abs(s.start - k)).toBeLessThan(0.03);
      expect(Math.abs(s.end - (k + 0.6))).toBeLessThan(0.03);
    });

    const requests = requestsOf(id);
    expect(requests.map((r) => [r.fileName, r.status])).toEqual([
      [`${id}-1.wav`, 200],
      [`${id}-2.wav`, 200],
      [`${id}-3.wav`, 200],
    ]);
    for (const r of requests) {
      expect(r).toMatchObject({ protocol: 'openai', path: '/v1/audio/transcriptions', fileField: 'file', fileType: 'audio/wav', isWav: true, authorization: `Bearer ${KEY}` });
      expect(r.bytes).toBeLessThanOrEqual(150 * 1024);
      expect(r.fields).toEqual([
        ['model', 'whisper-large-v3-turbo'],
        ['response_format', 'verbose_json'],
        ['timestamp_granularities[]', 'segment'],
        ['timestamp_granularities[]', 'word'],
        ['temperature', '0'],
      ]);
    }
    // The chunks hold the whole audio, nothing twice.
    expect(requests.reduce((n, r) => n + r.seconds, 0)).toBeCloseTo(12, 3);

    // Progress said which chunk was being sent, to which backend and model.
    const details = (await events(id)).filter((e) => e.event === 'status').map((e) => [e.stage, e.progress, e.stageDetail]);
    expect(details).toEqual(
      expect.arrayContaining([
        ['transcribing', 50, 'Transcribing chunk 1 of 3 with openai (whisper-large-v3-turbo)'],
        ['transcribing', 63, 'Transcribing chunk 2 of 3 with openai (whisper-large-v3-turbo)'],
        ['transcribing', 76, 'Transcribing chunk 3 of 3 with openai (whisper-large-v3-turbo)'],
        ['finalizing', 90, 'Writing the transcript'],
      ]),
    );
    // The words came with their times, in the whole file's time; the subtitles are cut from them.
    expect(job.segments[11].words).toEqual([
      { word: 'tone', start: 11, end: 11.2 },
      { word: '850', start: 11.2, end: 11.4 },
      { word: 'hertz', start: 11.4, end: 11.6 },
    ]);
    const srt = await (await fetch(`${h.url}/api/jobs/${id}/files/srt`)).text();
    // Fewer cues than segments: tones a short pause apart share a cue, up to two lines of 42 characters.
    const cues = srt.trim().split('\n\n');
    expect(cues.length).toBeLessThan(12);
    expect(srt).toMatch(/tone 850 hertz\n$/);
    for (const cue of cues) for (const line of cue.split('\n').slice(2)) expect(line.length).toBeLessThanOrEqual(42);
    // The work folder (chunks and their segments) is gone.
    await expect.poll(() => fs.stat(path.join(h.stack.dataDir, 'tmp', 'transcription', id)).then(() => true, () => false)).toBe(false);
  });

  it('cancelling a job aborts the request in flight: the server sees the client go', async () => {
    h.asr.syncDelayMs = 120_000;
    const id = await start(tones([{ hz: 500, seconds: 1 }, { seconds: 0.5 }]));
    const request = await h.asr.waitFor(() => requestsOf(id).find((r) => r.bytes > 0), 30_000, 'the request');
    expect((await waitForJob(h.url, id, (j) => j.stage === 'transcribing')).stageDetail).toBe('Transcribing the audio with openai (whisper-large-v3-turbo)');
    const res = await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    await h.asr.waitFor(() => request.aborted, 20_000, 'the request to be aborted');
    expect(request.status).toBeUndefined();
    const row = await h.stack.orm.em.fork().findOneOrFail(Job, { id });
    await expect.poll(async () => (await h.stack.temporal.workflow.getHandle(row.workflowId).describe()).status.name, { timeout: 20_000 }).toBe('CANCELLED');
    expect(await getJob(h.url, id)).toMatchObject({ status: 'cancelled', segments: [], transcript_source: null, asrBackend: null });
    expect(requestsOf(id)).toHaveLength(1);
  });

  it('429 is retried after its Retry-After', async () => {
    h.asr.syncScript.push({
      status: 429,
      headers: { 'retry-after': '3' },
      body: { error: { message: 'Rate limit reached for model `whisper-large-v3-turbo`. Please try again in 3s.', type: 'seconds', code: 'rate_limit_exceeded' } },
    });
    const id = await start(tones([{ hz: 700, seconds: 1 }, { seconds: 0.5 }]));
    const job = await waitForJob(h.url, id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'done', segments: [expect.objectContaining({ text: 'tone 700 hertz' })] });
    const [first, second] = requestsOf(id);
    expect([first!.status, second!.status]).toEqual([429, 200]);
    // The retry policy's own first backoff is 1 s: only Retry-After explains the wait.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2900);
    expect(second!.sha256).toBe(first!.sha256);
  });

  it('503 while the model loads: the job waits Retry-After (showing it), then sends the chunk again', async () => {
    h.asr.setModel('loading');
    h.asr.retryAfterSeconds = 2;
    const id = await start(tones([{ hz: 450, seconds: 1 }, { seconds: 0.5 }]));
    const waiting = await waitForJob(h.url, id, (j) => j.stage === 'waiting-for-model', 30_000);
    expect(waiting).toMatchObject({ status: 'processing', stageDetail: 'The backend is loading its model or busy (503); sending the audio again in 2 s' });
    h.asr.setModel('ready');
    const job = await waitForJob(h.url, id, isFinished, 60_000);
    expect(job.status).toBe('done');
    const requests = requestsOf(id);
    expect(requests.map((r) => r.status).slice(-1)).toEqual([200]);
    expect(requests.filter((r) => r.status === 503).length).toBeGreaterThanOrEqual(1);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1900);
  });

  it("a chunk's segments, once kept, are not asked for again; segments kept for another cut of the audio are not used", async () => {
    for (const matching of [true, false]) {
      h.asr.syncScript.push({ status: 503, headers: { 'retry-after': '3' }, body: { error: { message: 'Loading model' } } });
      const id = await start(tones([{ hz: 650, seconds: 1 }, { seconds: 0.5 }]));
      await h.asr.waitFor(() => requestsOf(id).find((r) => r.status === 503), 30_000, 'the 503');
      // While the job waits out Retry-After, segments for its chunk appear (as an earlier attempt, or a run still
      // winding down, would leave them).
      // The run's folder holds a folder per step and attempt (`audio-1`, `chunks-1`).
      const work = path.join(h.stack.dataDir, 'tmp', 'transcription', id);
      const files = (await fs.readdir(work, { recursive: true })).map((f) => path.join(work, f));
      const audio = files.find((f) => path.basename(f) === 'audio.wav')!;
      const chunks = files.find((f) => /^chunks-\d+$/.test(path.basename(f)))!;
      const { size } = await fs.stat(audio);
      const kept = { start: 0, seconds: (size - 44) / 32_000, bytes: matching ? size : size + 2, segments: [{ start: 0.1, end: 0.9, text: 'kept words' }] };
      await fs.writeFile(path.join(chunks, 'chunk-000.json'), JSON.stringify(kept));
      const job = await waitForJob(h.url, id, isFinished, 60_000);
      expect(job.status).toBe('done');
      if (matching) {
        expect(job.segments.map((x: { text: string }) => x.text)).toEqual(['kept words']);
        expect(requestsOf(id).map((r) => r.status)).toEqual([503]);
      } else {
        expect(job.segments.map((x: { text: string }) => x.text)).toEqual(['tone 650 hertz']);
        expect(requestsOf(id).map((r) => r.status)).toEqual([503, 200]);
      }
    }
  });

  it('gives up when the model is still loading after TRANSCRIPTION_MAX_RESUBMITS', async () => {
    h.asr.setModel('loading');
    h.asr.retryAfterSeconds = 0;
    const id = await start(tones([{ hz: 450, seconds: 1 }]));
    const job = await waitForJob(h.url, id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'failed', error: 'The transcription backend was still loading its model after 4 requests' });
    expect(requestsOf(id).map((r) => r.status)).toEqual([503, 503, 503, 503]);
  });

  it('a permanent refusal fails the job with the server’s message; retry runs it again the same way', async () => {
    h.asr.syncScript.push({ status: 401, body: { error: { message: 'Invalid API Key', type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const id = await start(tones([{ hz: 550, seconds: 1 }, { seconds: 0.5 }]));
    const failed = await waitForJob(h.url, id, isFinished, 60_000);
    expect(failed).toMatchObject({ status: 'failed', error: 'The transcription backend answered 401: Invalid API Key (check ASR_API_KEY)', asrBackend: null });
    expect(requestsOf(id)).toHaveLength(1);

    const retried = await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    const done = await waitForJob(h.url, id, (j) => j.status === 'done', 60_000);
    expect(done).toMatchObject({ runs: 2, transcript_source: 'asr', asrBackend: 'openai', segments: [expect.objectContaining({ text: 'tone 550 hertz' })] });
    const [first, second] = requestsOf(id);
    expect(second!.sha256).toBe(first!.sha256);
  });

  it('replays the histories of finished synchronous jobs with the current workflow code', async () => {
    const { Worker } = await import('@temporalio/worker');
    const { workflowBundle } = await import('../../runtime/worker.js');
    const jobs = await h.stack.orm.em.fork().find(Job, { kind: 'transcription', completedAt: { $ne: null } });
    expect(jobs.length).toBeGreaterThanOrEqual(5);
    const histories = await Promise.all(
      jobs.map(async (j) => ({ workflowId: j.workflowId, history: await h.stack.temporal.workflow.getHandle(j.workflowId).fetchHistory() })),
    );
    for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), replayName: 'transcription-sync' }, histories)) {
      expect(r.error).toBeUndefined();
    }
  });
});

describe.each([
  ['whisper-cpp', { protocol: 'whisper-cpp', path: '/inference', fileField: 'file' }],
  ['whisper-asr', { protocol: 'whisper-asr', path: '/asr', fileField: 'audio_file', query: { encode: 'true', task: 'transcribe', output: 'json' } }],
] as const)('ASR_BACKEND=%s', (backend, expected) => {
  let other: TranscriptionHarness;
  beforeAll(async () => {
    other = await startTranscriptionHarness({ env: { ASR_BACKEND: backend, ASR_MODEL: 'large-v3' } });
  });
  afterAll(() => other?.stop());

  it('transcribes an upload through its protocol', async () => {
    const created = await uploadJob(other.url, { bytes: tones([{ hz: 400, seconds: 1 }, { seconds: 0.5 }, { hz: 600, seconds: 1 }]), name: 'two.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const job = await waitForJob(other.url, created.body.id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'done', transcript_source: 'asr', asrBackend: backend, asrModel: 'large-v3' });
    expect(job.segments).toEqual([
      { id: 1, start: 0, end: 1, text: 'tone 400 hertz', words: expect.arrayContaining([{ word: '400', start: 0.333, end: 0.667 }]) },
      { id: 2, start: 1.5, end: 2.5, text: 'tone 600 hertz', words: expect.arrayContaining([{ word: '600', start: 1.833, end: 2.167 }]) },
    ]);
    expect(other.asr.syncRequests).toHaveLength(1);
    expect(other.asr.syncRequests[0]).toMatchObject({ ...expected, fileName: `${created.body.id}.wav`, isWav: true, status: 200 });
  });
});

describe('a server that takes longer than the heartbeat timeout to answer a chunk', () => {
  let slow: TranscriptionHarness;
  beforeAll(async () => {
    slow = await startTranscriptionHarness({ env: { ASR_BACKEND: 'whisper-cpp', TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '1500' } });
  });
  afterAll(() => slow?.stop());

  it('is waited for, not taken for a hung step and asked again', async () => {
    // Transcribing is the server's work: the request is in flight, so the step is waiting, not stalled.
    slow.asr.syncDelayMs = 5000;
    const created = await uploadJob(slow.url, { bytes: tones([{ hz: 700, seconds: 1 }]), name: 'slow.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const job = await waitForJob(slow.url, created.body.id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'done', segments: [expect.objectContaining({ text: 'tone 700 hertz' })] });
    expect(slow.asr.syncRequests).toHaveLength(1);
  });
});

describe('speakers and words from whisper-asr-webservice with WhisperX (ASR_DIARIZE=true), in chunks', () => {
  let wx: TranscriptionHarness;
  beforeAll(async () => {
    wx = await startTranscriptionHarness({ env: { ASR_BACKEND: 'whisper-asr', ASR_DIARIZE: 'true', ASR_CHUNK_MAX_BYTES: '150kb' } });
    wx.asr.whisperAsrEngine = 'whisperx';
  });
  afterAll(() => wx?.stop());

  it('keeps each segment’s speaker (labelled per chunk) and words; the files show them, the VTT parses, every cue within the rules', async () => {
    // Two voices: low tones (the fake's first speaker) and high ones (its second), alternating, 12 s in 3 chunks.
    const created = await uploadJob(wx.url, { bytes: twelveTones(), name: 'dialogue.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const job = await waitForJob(wx.url, created.body.id, isFinished, 60_000);
    expect(job.status).toBe('done');
    const requests = wx.asr.syncRequests.filter((r) => r.fileName.startsWith(created.body.id));
    expect(requests).toHaveLength(3);
    for (const r of requests) expect(r.query).toMatchObject({ diarize: 'true', word_timestamps: 'true' });
    // Each tone's speaker by its pitch; chunk n's labels are its own (`SPEAKER_00 (part 2)` is not assumed to be
    // the first chunk's `SPEAKER_00`).
    job.segments.forEach((s: { speaker: string; words: unknown[] }, k: number) => {
      const label = 300 + 50 * k < 500 ? 'SPEAKER_00' : 'SPEAKER_01';
      expect(s.speaker).toMatch(new RegExp(`^${label}( \\(part [23]\\))?$`));
      expect(s.words).toHaveLength(3);
    });
    expect(job.segments[0].speaker).toBe('SPEAKER_00');
    expect(job.segments.at(-1).speaker).toBe('SPEAKER_01 (part 3)');

    const vtt = await (await fetch(`${wx.url}/api/jobs/${created.body.id}/files/vtt`)).text();
    const { WebVTTParser } = await import('webvtt-parser');
    const parsed = new WebVTTParser().parse(vtt, 'subtitles');
    expect(parsed.errors).toEqual([]);
    for (const cue of parsed.cues) {
      const voice = cue.tree.children[0]!;
      expect(voice).toMatchObject({ type: 'object', name: 'v' });
      // The voice of every cue is the speaker of every word in it.
      const inCue = job.segments.filter((s: { start: number; end: number }) => s.start < cue.endTime && s.end > cue.startTime);
      for (const s of inCue) expect(s.speaker).toBe(voice.value);
      expect(cue.endTime - cue.startTime).toBeLessThanOrEqual(7);
      for (const line of cue.text.replace(/<[^>]+>/g, '').split('\n')) expect(line.length).toBeLessThanOrEqual(42);
    }
    const txt = await (await fetch(`${wx.url}/api/jobs/${created.body.id}/files/txt`)).text();
    expect(txt.startsWith('SPEAKER_00: tone 300 hertz')).toBe(true);
  });
});
