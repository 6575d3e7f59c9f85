import { WebVTTParser } from 'webvtt-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeLlm } from '../../fakes/recipe-fakes.js';
import { BrowserSubscriber } from '../../fakes/push-service.js';
import { json, type Json } from '../support/http.js';
import { isFinished, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';
import { until } from '../support/until.js';
import { readEvents } from '../../jobs/events.js';

/**
 * Translations and summaries end to end, through the language-model fake (fakes/llm-transcripts.ts): a done
 * transcript with two speakers is translated in chunks of 4 subtitle lines with context, every cue keeping its
 * timing; a model that drops, merges or does not translate lines is asked again, then the translation fails with a
 * clear error and nothing else changes; a summary with chapters; bad input; cancel and run again.
 */
let h: TranscriptionHarness;
let llm: FakeLlm;
let browser: BrowserSubscriber;
beforeAll(async () => {
  llm = await FakeLlm.start();
  h = await startTranscriptionHarness({
    env: {
      LLM_API_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test-llm', LLM_MODEL: 'fake-model', TRANSLATION_CHUNK_LINES: '4', TRANSLATION_CONTEXT_LINES: '2', TRANSCRIPT_LLM_ATTEMPTS: '2', SUMMARY_CHUNK_SEGMENTS: '10',
      // Nothing here tests a hung step: the harness's 3 s let a busy CI machine time out a translation's heartbeat,
      // which spent the attempt a test meant for the model's mistake. Cancelling still reaches the step in time.
      TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '8000',
    },
  });
  browser = new BrowserSubscriber(`${h.push.url}/push/browser-1`);
  await fetch(`${h.url}/api/notifications/subscribe`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ clientId: 'client-1', subscription: browser.toJSON() }),
  });
});
afterAll(async () => {
  await h?.stop();
  await llm?.close();
});
afterEach(() => llm.reset());

const words = (text: string, start: number, end: number) => {
  const list = text.split(' ');
  const step = (end - start) / list.length;
  return list.map((word, i) => ({ word, start: start + i * step, end: start + (i + 1) * step }));
};
const SENTENCES = [
  'Welcome to the show about durable pipelines.',
  'Today we talk about workflows and the activities they run.',
  'Every activity is safe to run twice, which matters when a worker dies.',
  'Temporal keeps the history of every workflow.',
  'So a crash never loses the work that was done before it.',
  'That is also why timeouts come in as inputs.',
  'Tests can then use short ones.',
  'Now a word about the language model that translates.',
  'It gets numbered lines, with context around them.',
  'And it answers with the same numbers.',
  'Thanks for listening, and see you next time.',
  'Goodbye.',
];
/** Twelve segments of two speakers, with word times, 3 s apart. */
const segments = SENTENCES.map((text, i) => ({ start: i * 3, end: i * 3 + 2.6, text: ` ${text}`, speaker: i % 4 < 2 ? 'SPEAKER_00' : 'SPEAKER_01', words: words(text, i * 3, i * 3 + 2.6) }));

async function doneJob(): Promise<string> {
  const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'talk.wav' }, { mode: 'none', title: 'Durable talk' });
  const id = created.body.id as string;
  const submission = await h.asr.waitForJob(id);
  expect(await h.asr.complete(submission, segments)).toEqual({ status: 200, body: { ok: true } });
  expect((await waitForJob(h.url, id, isFinished)).status).toBe('done');
  return id;
}

const post = async (path: string, body: unknown): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await json(res) };
};
const text = async (path: string) => {
  const res = await fetch(`${h.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.text();
};
const translation = (job: Json, language: string) => (job.translations as Json[]).find((t) => t.language === language);
const waitForTranslation = (id: string, language: string) =>
  waitForJob(h.url, id, (job) => ['done', 'failed', 'cancelled'].includes(translation(job, language)?.status), 60_000).then((job) => translation(job, language)!);
const cues = (vtt: string) => {
  const parsed = new WebVTTParser().parse(vtt, 'subtitles');
  expect(parsed.errors).toEqual([]);
  return parsed.cues;
};
const translationRequests = () => llm.requests.filter((r) => /numbered subtitle lines/.test(r.body.messages[0]!.content));

describe('a translation', () => {
  it('keeps every cue\'s timing and speaker, in chunks with context, and is listed, downloadable and notified', async () => {
    const id = await doneJob();
    const started = await post(`/api/jobs/${id}/translations`, { language: 'DE' });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ task: 'translation', language: 'de', status: 'pending', files: null });

    const done = await waitForTranslation(id, 'de');
    expect(done).toMatchObject({ status: 'done', progress: 100, error: null, files: { vtt: `/api/jobs/${id}/files/vtt?language=de` } });

    // Every cue of the original, translated, at the same times, with the same voices.
    const original = cues(await text(`/api/jobs/${id}/files/vtt`));
    const translated = cues(await text(`/api/jobs/${id}/files/vtt?language=de`));
    expect(original.length).toBeGreaterThan(8);
    expect(translated.map((c) => [c.startTime, c.endTime])).toEqual(original.map((c) => [c.startTime, c.endTime]));
    expect(translated.map((c) => c.tree.children[0]!.value)).toEqual(original.map((c) => c.tree.children[0]!.value));
    for (const [i, cue] of translated.entries()) {
      const orig = original[i]!.text.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
      expect(cue.text.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim()).toBe(`[de] ${orig}`);
    }
    // SRT's times too, and JSON's segments are the cues with their times.
    const srtTimes = (srt: string) => srt.match(/^\d\d:\d\d:\d\d,\d\d\d --> .*$/gm);
    expect(srtTimes(await text(`/api/jobs/${id}/files/srt?language=de`))).toEqual(srtTimes(await text(`/api/jobs/${id}/files/srt`)));
    const file = JSON.parse(await text(`/api/jobs/${id}/files/json?language=de`));
    expect(file.language).toBe('de');
    expect(file.segments.map((s: Json) => [s.start, s.end])).toEqual(original.map((c) => [c.startTime, c.endTime]));
    expect(await text(`/api/jobs/${id}/files/txt?language=de`)).toContain('SPEAKER_01: [de]');
    expect(await text(`/api/jobs/${id}/files/md?language=de`)).toMatch(/^# Durable talk \(de\)\n/);

    // Chunks of 4 numbered lines; the second carries the first's last 2 lines as context.
    const asked = translationRequests();
    expect(asked).toHaveLength(Math.ceil(original.length / 4));
    const second = asked[1]!.body.messages[1]!.content;
    expect(second).toMatch(/Context before \(do not translate\):\n.+\n.+\nLines to translate:\n1\. /);
    expect(second).toContain('Target language: de');

    // Listed on the job (and in the list), asked again: the same one, as it is.
    const job = await waitForJob(h.url, id, () => true);
    expect(job.translations).toHaveLength(1);
    const list = await json(await fetch(`${h.url}/api/jobs?limit=50`));
    expect(translation(list.items.find((j: Json) => j.id === id), 'de')).toMatchObject({ status: 'done' });
    const again = await post(`/api/jobs/${id}/translations`, { language: 'de' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(started.body.id);
    expect(translationRequests()).toHaveLength(asked.length);

    // Its progress went out as `extra` events on every job's stream, naming the transcription job.
    const extra = (await readEvents(h.stack.orm.em.fork(), 'kind:transcription', 0)).filter((e) => e.event === 'extra' && e.data.jobId === id);
    expect(extra.some((e) => e.data.stage === 'translating' && e.data.status === 'processing')).toBe(true);
    expect(extra.at(-1)!.data).toMatchObject({ extraId: started.body.id, task: 'translation', language: 'de', status: 'done', progress: 100 });

    // Notified.
    await until(
      async () => h.push.requests.map((r) => JSON.parse(browser.decrypt(r.body)) as Json),
      (all) => all.some((n) => n.title === 'Translation ready'),
      { timeoutMs: 15_000, what: 'the push notification' },
    );
  });

  it('is asked again when the model drops or merges lines, and then succeeds', async () => {
    const id = await doneJob();
    llm.script.push({ kind: 'transcript', misbehave: 'drop-line' });
    expect((await post(`/api/jobs/${id}/translations`, { language: 'fr' })).status).toBe(202);
    expect(await waitForTranslation(id, 'fr')).toMatchObject({ status: 'done' });
    const chunks = Math.ceil(cues(await text(`/api/jobs/${id}/files/vtt`)).length / 4);
    expect(translationRequests()).toHaveLength(chunks + 1);
  });

  it('fails with a clear error when the model keeps dropping or merging lines, and runs again when asked again', async () => {
    const id = await doneJob();
    llm.fallback = { kind: 'transcript', misbehave: 'merge-lines' };
    await post(`/api/jobs/${id}/translations`, { language: 'es' });
    const failed = await waitForTranslation(id, 'es');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^The translation into es failed at part 1 of \d+: LINES_MISMATCH: 4 lines were asked and 3 answered/);
    expect(translationRequests()).toHaveLength(2); // TRANSCRIPT_LLM_ATTEMPTS
    // The transcript itself is untouched; its files are there.
    const job = await waitForJob(h.url, id, () => true);
    expect(job.status).toBe('done');
    expect(await text(`/api/jobs/${id}/files/vtt`)).toMatch(/^WEBVTT/);
    expect((await fetch(`${h.url}/api/jobs/${id}/files/vtt?language=es`)).status).toBe(409);

    // Asked again with a model that behaves: the same translation runs again.
    llm.fallback = { kind: 'read' };
    const again = await post(`/api/jobs/${id}/translations`, { language: 'es' });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: failed.id, status: 'pending', runs: 2 });
    expect(await waitForTranslation(id, 'es')).toMatchObject({ status: 'done', error: null });
  });

  it('fails when the model answers in the wrong language (lines unchanged, or not in the script)', async () => {
    const id = await doneJob();
    llm.fallback = { kind: 'transcript', misbehave: 'untranslated' };
    await post(`/api/jobs/${id}/translations`, { language: 'it' });
    expect((await waitForTranslation(id, 'it')).error).toMatch(/WRONG_LANGUAGE: the answer is not in Italian \(it\): \d+ of \d+ lines came back unchanged/);
    await post(`/api/jobs/${id}/translations`, { language: 'ru' });
    expect((await waitForTranslation(id, 'ru')).error).toMatch(/WRONG_LANGUAGE: the answer is not in Russian \(ru\): most of its letters are not in the script/);
    // A model that does write Russian passes.
    llm.fallback = { kind: 'read' };
    await post(`/api/jobs/${id}/translations`, { language: 'ru' });
    expect(await waitForTranslation(id, 'ru')).toMatchObject({ status: 'done' });
    expect(await text(`/api/jobs/${id}/files/txt?language=ru`)).toContain('[ru] велцоме то тхе схов');
  });

  it('refuses an unknown language, a job not done, and an unknown job', async () => {
    const id = await doneJob();
    for (const language of ['xx-nope', 'English', 'zz']) {
      const res = await post(`/api/jobs/${id}/translations`, { language });
      expect(res.status, language).toBe(400);
      expect(res.body.code).toBe('UNKNOWN_LANGUAGE');
    }
    expect((await post(`/api/jobs/${id}/translations`, {})).status).toBe(400);
    expect((await post(`/api/jobs/${id}/summary`, { language: 'nope!' })).body.code).toBe('UNKNOWN_LANGUAGE');
    expect((await fetch(`${h.url}/api/jobs/${id}/files/vtt?language=pt-BR`)).status).toBe(404);
    expect((await fetch(`${h.url}/api/jobs/${id}/files/vtt?language=nope!`)).status).toBe(400);

    const pending = await uploadJob(h.url, { bytes: smallWav(1), name: 'pending.wav' }, { mode: 'none' });
    const notDone = await post(`/api/jobs/${pending.body.id}/translations`, { language: 'de' });
    expect(notDone.status).toBe(409);
    expect(notDone.body.code).toBe('TRANSCRIPT_NOT_READY');
    expect((await post('/api/jobs/00000000-0000-4000-8000-000000000000/translations', { language: 'de' })).status).toBe(404);
    expect(llm.requests).toHaveLength(0);
  });

  it('can be cancelled while the model thinks', async () => {
    const id = await doneJob();
    llm.delayMs = 20_000;
    await post(`/api/jobs/${id}/translations`, { language: 'nl' });
    await until(async () => llm.requests.length, (n) => n > 0, { timeoutMs: 15_000, what: 'the first request' });
    const res = await fetch(`${h.url}/api/jobs/${id}/translations/nl`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: 'cancelled' });
    expect(await waitForTranslation(id, 'nl')).toMatchObject({ status: 'cancelled', error: 'Cancelled' });
    // The request in flight was aborted.
    await until(async () => llm.requests[0]!.aborted, (a) => a, { timeoutMs: 15_000, what: 'the aborted request' });
  });
});

describe('a summary', () => {
  it('has chapters at the segments\' times, in MD and JSON, on the job', async () => {
    const id = await doneJob();
    const started = await post(`/api/jobs/${id}/summary`, {});
    expect(started.status).toBe(202);
    const job = await waitForJob(h.url, id, (j) => isFinished(j.summary ?? { status: 'pending' }), 60_000);
    expect(job.summary).toMatchObject({ task: 'summary', language: null, status: 'done', files: { md: `/api/jobs/${id}/summary/md` } });
    const s = job.summary.summary;
    // Twelve segments in parts of ten: two parts, then one summary of both.
    expect(s.summary).toBe('The whole recording: 2 parts.');
    const starts = segments.map((x) => x.start);
    expect(s.chapters.length).toBeGreaterThanOrEqual(3);
    for (const c of s.chapters) expect(starts).toContain(c.start);
    expect(s.chapters[0]).toMatchObject({ start: 0, title: 'Welcome to the show' });
    expect(s.chapters.map((c: Json) => c.end)).toEqual([...s.chapters.slice(1).map((c: Json) => c.start), 35.6]);
    const md = await text(`/api/jobs/${id}/summary/md`);
    expect(md).toMatch(/^# Durable talk: summary\n\nThe whole recording: 2 parts\.\n\n## Chapters\n\n- \*\*\[00:00\] Welcome to the show\*\*/);
    expect(JSON.parse(await text(`/api/jobs/${id}/summary/json`))).toMatchObject({ title: 'Durable talk', summary: s.summary, chapters: s.chapters });
    expect(llm.requests).toHaveLength(3);

    // One in another language is its own, addressed with ?language=.
    expect((await post(`/api/jobs/${id}/summary`, { language: 'de' })).status).toBe(202);
    await until(async () => (await fetch(`${h.url}/api/jobs/${id}/summary/md?language=de`)).status, (st) => st === 200, { timeoutMs: 30_000, what: 'the German summary' });
    expect(await text(`/api/jobs/${id}/summary/md?language=de`)).toContain('- **[00:00] \\[de\\] Welcome to the show**');
    expect(await text(`/api/jobs/${id}/summary/md`)).toBe(md);
  });
});
