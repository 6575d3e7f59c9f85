import fs from 'node:fs/promises';
import path from 'node:path';
import { WebVTTParser } from 'webvtt-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { correctSegment, renameSpeakers } from '../../transcription/transcripts/edits.js';
import type { NumberedSegment } from '../../transcription/transcripts/segments.js';
import { type Json } from '../support/http.js';
import { isFinished, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Speakers and corrections end to end: a callback backend's result with `speaker` and `words` per segment, kept on
 * the job and in every file; PATCH /api/jobs/:id/speakers names them and PATCH /api/jobs/:id/segments/:segmentId
 * corrects a segment, the files following each change.
 */
let h: TranscriptionHarness;
beforeAll(async () => {
  h = await startTranscriptionHarness();
});
afterAll(() => h?.stop());

const words = (text: string, start: number, end: number) => {
  const list = text.split(' ');
  const step = (end - start) / list.length;
  return list.map((word, i) => ({ word, start: start + i * step, end: start + (i + 1) * step }));
};
/** What the callback contract's backend sends for a two-voice recording: WhisperX's labels, words per segment. */
const diarized = [
  { start: 0, end: 2.5, text: ' Hello, I am the first voice.', speaker: 'SPEAKER_00', words: words('Hello, I am the first voice.', 0, 2.5) },
  { start: 2.8, end: 5.5, text: ' And I am the second one here.', speaker: 'SPEAKER_01', words: words('And I am the second one here.', 2.8, 5.5) },
  { start: 5.8, end: 7.5, text: ' Good to hear you, Gristmil.', speaker: 'SPEAKER_00', words: words('Good to hear you, Gristmil.', 5.8, 7.5) },
];

async function doneJob(): Promise<string> {
  const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'two-voices.wav' }, { mode: 'none' });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const submission = await h.asr.waitForJob(id);
  expect(await h.asr.complete(submission, diarized)).toEqual({ status: 200, body: { ok: true } });
  expect((await waitForJob(h.url, id, isFinished)).status).toBe('done');
  return id;
}

const file = async (id: string, format: string) => {
  const res = await fetch(`${h.url}/api/jobs/${id}/files/${format}`);
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type'), text: await res.text() };
};
const patch = async (path: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${h.url}${path}`, { method: 'PATCH', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
};

describe('speakers from the backend', () => {
  it('are kept on the segments with their words, shown in SRT, VTT, TXT and MD, and kept in JSON', async () => {
    const id = await doneJob();
    const job = await waitForJob(h.url, id, isFinished);
    expect(job.segments.map((s: NumberedSegment) => [s.id, s.speaker, s.text, s.words?.length])).toEqual([
      [1, 'SPEAKER_00', 'Hello, I am the first voice.', 6],
      [2, 'SPEAKER_01', 'And I am the second one here.', 7],
      [3, 'SPEAKER_00', 'Good to hear you, Gristmil.', 5],
    ]);
    expect(job.files.vtt).toBe(`/api/jobs/${id}/files/vtt`);

    const srt = (await file(id, 'srt')).text;
    expect(srt).toContain('SPEAKER_00: Hello, I am the first voice.');
    expect(srt).toContain('SPEAKER_01: And I am the second one here.');
    const vtt = await file(id, 'vtt');
    expect(vtt.type).toBe('text/vtt; charset=utf-8');
    const parsed = new WebVTTParser().parse(vtt.text, 'subtitles');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.map((c) => c.tree.children[0]!.value)).toEqual(['SPEAKER_00', 'SPEAKER_01', 'SPEAKER_00']);
    expect((await file(id, 'txt')).text).toBe('SPEAKER_00: Hello, I am the first voice.\n\nSPEAKER_01: And I am the second one here.\n\nSPEAKER_00: Good to hear you, Gristmil.\n');
    expect((await file(id, 'md')).text).toContain('**[00:02] SPEAKER\\_01:** And I am the second one here.');
    const json = JSON.parse((await file(id, 'json')).text);
    expect(json.segments[1]).toMatchObject({ id: 2, speaker: 'SPEAKER_01', words: expect.arrayContaining([expect.objectContaining({ word: 'second' })]) });

    // Named: the stored segments and every file follow.
    const named = await patch(`/api/jobs/${id}/speakers`, { SPEAKER_00: 'Ana', SPEAKER_01: 'Ben' });
    expect(named.status).toBe(200);
    expect(named.body.segments.map((s: NumberedSegment) => s.speaker)).toEqual(['Ana', 'Ben', 'Ana']);
    expect((await file(id, 'srt')).text).toContain('Ana: Hello, I am the first voice.');
    expect((await file(id, 'txt')).text).toContain('Ben: And I am the second one here.');
    expect(new WebVTTParser().parse((await file(id, 'vtt')).text, 'subtitles').cues.map((c) => c.tree.children[0]!.value)).toEqual(['Ana', 'Ben', 'Ana']);
    expect(JSON.parse((await file(id, 'json')).text).segments.map((s: NumberedSegment) => s.speaker)).toEqual(['Ana', 'Ben', 'Ana']);

    // A map naming no speaker of the transcript changes nothing.
    const unknown = await patch(`/api/jobs/${id}/speakers`, { SPEAKER_00: 'Zed' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'UNKNOWN_SPEAKER' });
    expect((await patch(`/api/jobs/${id}/speakers`, {})).status).toBe(400);
    expect((await patch(`/api/jobs/${id}/speakers`, { Ana: '' })).status).toBe(400);
    expect((await waitForJob(h.url, id, isFinished)).segments.map((s: NumberedSegment) => s.speaker)).toEqual(['Ana', 'Ben', 'Ana']);

    // A name can be renamed, and two speakers can become one.
    expect((await patch(`/api/jobs/${id}/speakers`, { Ana: 'Host', Ben: 'Host' })).body.segments.map((s: NumberedSegment) => s.speaker)).toEqual(['Host', 'Host', 'Host']);
  });
});

describe('corrections', () => {
  it("replace a segment's text, keep its timing, record the edit, and regenerate the files", async () => {
    const id = await doneJob();
    const res = await patch(`/api/jobs/${id}/segments/3`, { text: 'Good to hear you, Gristmill.' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 3, start: 5.8, end: 7.5, speaker: 'SPEAKER_00', text: 'Good to hear you, Gristmill.', edit: { originalText: 'Good to hear you, Gristmil.' } });
    expect(res.body.words).toBeUndefined();
    expect(Date.parse(res.body.edit.editedAt)).toBeGreaterThan(Date.now() - 60_000);
    const again = await patch(`/api/jobs/${id}/segments/3`, { text: 'Good to hear you,  Gristmill!' });
    expect(again.body).toMatchObject({ text: 'Good to hear you, Gristmill!', edit: { originalText: 'Good to hear you, Gristmil.' } });
    for (const format of ['srt', 'vtt', 'txt', 'md', 'json']) expect((await file(id, format)).text).toContain('Gristmill!');
    const job = await waitForJob(h.url, id, isFinished);
    expect(job.segments[2]).toMatchObject({ start: 5.8, end: 7.5, text: 'Good to hear you, Gristmill!' });
    expect(job.segments[0].text).toBe('Hello, I am the first voice.');

    // Bad requests change nothing.
    expect((await patch(`/api/jobs/${id}/segments/9`, { text: 'x' })).body).toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
    expect((await patch(`/api/jobs/${id}/segments/abc`, { text: 'x' })).status).toBe(404);
    expect((await patch(`/api/jobs/${id}/segments/1`, { text: '' })).status).toBe(400);
    expect((await patch(`/api/jobs/${id}/segments/1`, { text: '   ' })).status).toBe(400);
    expect((await patch(`/api/jobs/${id}/segments/1`, { text: 'x'.repeat(5001) })).status).toBe(400);
    expect((await patch(`/api/jobs/${id}/segments/1`, { text: 'a\u0000b' })).body).toMatchObject({ code: 'INVALID_CHARACTER' });
    expect((await patch(`/api/jobs/${id}/segments/1`, { words: 'x' })).status).toBe(400);
    expect((await patch(`/api/jobs/${id}/segments/1`, 'text', 'text/plain')).status).toBe(400);
    expect((await waitForJob(h.url, id, isFinished)).segments[0].text).toBe('Hello, I am the first voice.');
  });

  it('a job finished before VTT existed gets its files written again from its segments when one is asked for', async () => {
    const id = await doneJob();
    await patch(`/api/jobs/${id}/segments/1`, { text: 'Corrected first.' });
    const job = await waitForJob(h.url, id, isFinished);
    await fs.rm(path.join(job.outputDir, 'transcript.vtt'));
    const vtt = (await file(id, 'vtt')).text;
    expect(vtt).toMatch(/^WEBVTT\n/);
    expect(vtt).toContain('<v SPEAKER_00>Corrected first.</v>');
  });

  it('are refused with 409 while the job is not done, and 404 for an unknown job', async () => {
    const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'pending.wav' }, { mode: 'none' });
    const id = created.body.id as string;
    await h.asr.waitForJob(id);
    expect((await patch(`/api/jobs/${id}/segments/1`, { text: 'x' })).body).toMatchObject({ code: 'TRANSCRIPT_NOT_READY' });
    expect((await patch(`/api/jobs/${id}/speakers`, { A: 'x' })).status).toBe(409);
    expect((await patch('/api/jobs/00000000-0000-4000-8000-000000000000/speakers', { A: 'x' })).status).toBe(404);
    await fetch(`${h.url}/api/jobs/${id}`, { method: 'DELETE' });
  });
});

describe('the edits themselves (pure)', () => {
  const stored: NumberedSegment[] = [
    { id: 1, start: 0, end: 1, text: 'a', speaker: 'A' },
    { id: 2, start: 1, end: 2, text: 'b', words: [{ word: 'b', start: 1, end: 2 }] },
  ];
  it('rename only the speakers named, and refuse a label that is not there', () => {
    expect(renameSpeakers(stored, { A: ' Ana ' }).map((s) => s.speaker)).toEqual(['Ana', undefined]);
    expect(() => renameSpeakers(stored, { A: 'Ana', B: 'Ben' })).toThrow(/no speaker "B" \(its speakers are "A"\)/);
    expect(() => renameSpeakers([], { A: 'Ana' })).toThrow(/it has no speakers/);
    const odd: NumberedSegment[] = [{ id: 1, start: 0, end: 1, text: 'a', speaker: 'constructor' }, { id: 2, start: 1, end: 2, text: 'b', speaker: 'toString' }];
    expect(renameSpeakers(odd, { toString: 'Ts' }).map((s) => s.speaker)).toEqual(['constructor', 'Ts']);
  });
  it('correct a segment without touching the others, keeping the first original text', () => {
    const once = correctSegment(stored, 2, 'B!', new Date('2026-01-01T00:00:00Z'));
    expect(once[1]).toEqual({ id: 2, start: 1, end: 2, text: 'B!', edit: { originalText: 'b', editedAt: '2026-01-01T00:00:00.000Z' } });
    expect(once[0]).toBe(stored[0]);
    expect(correctSegment(once, 2, 'B?')[1]!.edit!.originalText).toBe('b');
  });
});
