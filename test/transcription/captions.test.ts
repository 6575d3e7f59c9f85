import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { VideoSite, wav } from '../../fakes/media.js';
import { getJob, isFinished, startTranscriptionHarness, type TranscriptionHarness, waitForJob } from '../support/transcription.js';

/**
 * URL jobs, end to end with the real yt-dlp (found on PATH or installed into the user cache, as in production)
 * reading pages from a local "video site": captions when they have words, the backend otherwise.
 */
let h: TranscriptionHarness;
let site: VideoSite;
beforeAll(async () => {
  [h, site] = await Promise.all([startTranscriptionHarness(), VideoSite.start()]);
}, 300_000);
afterAll(async () => {
  await Promise.allSettled([h?.stop(), site?.close()]);
});

const rollingCaptions = [
  'WEBVTT',
  'Kind: captions',
  'Language: en',
  '',
  '00:00:00.000 --> 00:00:02.000 align:start position:0%',
  ' ',
  'hello<00:00:00.400><c> and</c><00:00:00.800><c> welcome</c>',
  '',
  '00:00:02.000 --> 00:00:02.010 align:start position:0%',
  'hello and welcome',
  ' ',
  '',
  '00:00:02.010 --> 00:00:04.000 align:start position:0%',
  'hello and welcome',
  'to<00:00:02.400><c> the</c><00:00:02.800><c> captions</c>',
  '',
].join('\n');

async function createUrlJob(url: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${h.url}/api/jobs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ url, mode: 'none', ...body }),
  });
  expect(res.status).toBe(201);
  const job = await json(res);
  expect(job).toMatchObject({ status: 'pending', source: 'url', sourceUrl: url });
  return job.id;
}

describe('a video-site URL', () => {
  it('with non-empty captions: the transcript comes from them (deduplicated), the backend is never called', async () => {
    const url = site.add('captioned', { title: 'Captioned Talk', media: wav({ seconds: 1 }), vtt: rollingCaptions });
    const submissions = h.asr.attempts.length;
    const id = await createUrlJob(url);
    const job = await waitForJob(h.url, id, isFinished, 120_000);
    expect(job).toMatchObject({ status: 'done', transcript_source: 'captions', asrJobId: null, error: null });
    expect(job.segments.map((s: { text: string }) => s.text)).toEqual(['hello and welcome', 'to the captions']);
    // The title comes from the page when none was given.
    expect(job.title).toMatch(/^Captioned Talk/);
    expect(h.asr.attempts.length).toBe(submissions);
    expect(site.hits).toContain('/subs/captioned.en.vtt');
    expect(site.hits).not.toContain('/media/captioned.wav');
    const srt = await (await fetch(`${h.url}/api/jobs/${id}/files/srt`)).text();
    // The deduplicated caption segments, cut into subtitle cues again: here one cue of two lines.
    expect(srt).toBe('1\n00:00:00,000 --> 00:00:04,000\nhello and welcome to the captions\n');
  });

  it.each([
    ['whitespace-only captions', 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n   \n\n00:00:02.000 --> 00:00:03.000\n<c> </c>\n'],
    ['empty captions', ''],
    ['no captions', undefined],
  ])('with %s: the audio is downloaded and transcribed by the backend (transcript_source asr)', async (label, vtt) => {
    const name = label.replace(/[^a-z]+/g, '-').replace(/-$/, '');
    const url = site.add(name, { title: `Talk ${label}`, media: wav({ seconds: 2, pauses: true }), ...(vtt !== undefined && { vtt }) });
    const id = await createUrlJob(url, { title: 'My own title' });
    const submission = await h.asr.waitForJob(id, 120_000);
    expect(submission.isWav).toBe(true);
    expect(submission.bytes).toBe(44 + 2 * 32_000);
    expect(site.hits).toContain(`/media/${name}.wav`);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    expect(await h.asr.complete(submission, [{ start: 0, end: 2, text: 'spoken words' }])).toEqual({ status: 200, body: { ok: true } });
    expect(await getJob(h.url, id)).toMatchObject({ status: 'done', transcript_source: 'asr', title: 'My own title', segmentCount: 1 });
  });

  it('retrying a failed URL job downloads again', async () => {
    const url = site.add('retried', { title: 'Retried Talk', media: wav({ seconds: 1 }) });
    const id = await createUrlJob(url);
    const first = await h.asr.waitForJob(id, 120_000);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    await h.asr.fail(first, 'model crashed');
    expect((await getJob(h.url, id)).status).toBe('failed');
    const downloads = () => site.hits.filter((p) => p === '/media/retried.wav').length;
    expect(downloads()).toBe(1);

    expect((await fetch(`${h.url}/api/jobs/${id}/retry`, { method: 'POST' })).status).toBe(200);
    const second = await h.asr.waitFor(() => h.asr.jobs.filter((j) => j.externalId === id)[1], 120_000, 'a second submission');
    expect(downloads()).toBe(2);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    await h.asr.complete(second);
    expect((await getJob(h.url, id)).status).toBe('done');
  });

  it('a page that does not exist fails the job with what yt-dlp said, without retrying for long', async () => {
    const id = await createUrlJob(`${site.url}/watch/missing`);
    const job = await waitForJob(h.url, id, isFinished, 120_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/yt-dlp failed \(exit 1\): ERROR: .*404/);
  });
});
