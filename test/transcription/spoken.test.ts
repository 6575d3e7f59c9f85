import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WebVTTParser } from 'webvtt-parser';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FakeLlm } from '../../fakes/recipe-fakes.js';
import { spokenAudio } from '../support/speech.js';
import { isFinished, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Issue 26's target, on speech: two espeak-ng voices taking turns (test/support/speech.ts), uploaded as a WAV,
 * converted and measured by the real ffmpeg, and answered by a whisper-asr-webservice fake running WhisperX that
 * returns speakers and words (fakes/fake-asr.ts: the times of each utterance are those it hears in the audio, the
 * words and speaker those the test said). Every cue must keep the subtitle rules and carry its speaker, the VTT must
 * parse, and a translation must keep every cue's timing.
 */
// One sentence each: espeak-ng pauses after a sentence, and the fake would hear two utterances.
const UTTERANCES: { voice: 0 | 1; text: string }[] = [
  { voice: 0, text: 'Welcome back to the kitchen where today we are making a simple tomato soup for four people.' },
  { voice: 1, text: 'Thanks for having me and I brought fresh tomatoes from the market this morning which smell wonderful.' },
  { voice: 0, text: 'So first we chop two onions and soften them slowly in olive oil over a low heat for ten minutes.' },
  { voice: 1, text: 'Then the tomatoes go in with a little salt and we let everything simmer for about twenty minutes.' },
  { voice: 0, text: 'Blend it until smooth and taste it before serving.' },
  { voice: 1, text: 'And a spoon of cream on top makes it even better.' },
];

let h: TranscriptionHarness;
let llm: FakeLlm;
let dir: string;
beforeAll(async () => {
  const missing = inject('speechTools');
  if (missing) throw new Error(missing);
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-spoken-'));
  llm = await FakeLlm.start();
  h = await startTranscriptionHarness({
    env: {
      ASR_BACKEND: 'whisper-asr',
      ASR_DIARIZE: 'true',
      UPLOAD_MAX_BYTES: '20mb',
      LLM_API_BASE_URL: llm.baseUrl,
      LLM_API_KEY: 'sk-test-llm',
      LLM_MODEL: 'fake-model',
    },
  });
  h.asr.whisperAsrEngine = 'whisperx';
  h.asr.utterances = UTTERANCES;
});
afterAll(async () => {
  await h?.stop();
  await llm?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('a dialogue of two voices', () => {
  it('becomes cues within the subtitle rules, each with its speaker, in a VTT that parses; its translation keeps every cue', { timeout: 180_000 }, async () => {
    const audio = await spokenAudio(dir, UTTERANCES);
    const created = await uploadJob(h.url, { bytes: audio, name: 'dialogue.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    const job = await waitForJob(h.url, created.body.id, isFinished, 120_000);
    expect(job.status, job.error).toBe('done');
    // Every utterance heard, in order, with its speaker and its words.
    expect(job.segments.map((s: { text: string }) => s.text)).toEqual(UTTERANCES.map((u) => u.text));
    expect(job.segments.map((s: { speaker: string }) => s.speaker)).toEqual(UTTERANCES.map((u) => `SPEAKER_0${u.voice}`));
    for (const s of job.segments) expect(s.words.map((w: { word: string }) => w.word).join(' ')).toBe(s.text);

    const vtt = await (await fetch(`${h.url}/api/jobs/${created.body.id}/files/vtt`)).text();
    const parsed = new WebVTTParser().parse(vtt, 'subtitles');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.length).toBeGreaterThan(UTTERANCES.length); // long turns are cut into several cues
    const rates: number[] = [];
    for (const cue of parsed.cues) {
      const voice = cue.tree.children[0]!;
      expect(voice).toMatchObject({ type: 'object', name: 'v' });
      // The speaker of the turn its words are in (a cue may stay on screen into the pause after them), and no other.
      const turns = job.segments.filter((s: { start: number; end: number }) => s.start < cue.endTime && s.end > cue.startTime);
      expect(turns.length, `cue ${cue.startTime}-${cue.endTime} overlaps one turn: ${JSON.stringify(turns.map((t: { start: number; end: number }) => [t.start, t.end]))}`).toBe(1);
      expect(voice.value).toBe(turns[0].speaker);
      const lines = cue.text.replace(/<[^>]+>/g, '').split('\n');
      expect(lines.length).toBeLessThanOrEqual(2);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(42);
      const seconds = cue.endTime - cue.startTime;
      expect(seconds).toBeLessThanOrEqual(7);
      expect(seconds).toBeGreaterThanOrEqual(1);
      rates.push(lines.join(' ').length / seconds);
    }
    // Reading speed, at most 17 characters a second (espeak-ng at 165 words a minute speaks about 15).
    expect(Math.max(...rates)).toBeLessThanOrEqual(17.05);

    const asked = await fetch(`${h.url}/api/jobs/${created.body.id}/translations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ language: 'de' }),
    });
    expect(asked.status).toBe(202);
    const done = await waitForJob(h.url, created.body.id, (j) => j.translations?.[0]?.status === 'done' || j.translations?.[0]?.status === 'failed', 60_000);
    expect(done.translations[0]).toMatchObject({ language: 'de', status: 'done' });
    const translated = new WebVTTParser().parse(await (await fetch(`${h.url}/api/jobs/${created.body.id}/files/vtt?language=de`)).text(), 'subtitles');
    expect(translated.errors).toEqual([]);
    expect(translated.cues.map((c) => [c.startTime, c.endTime])).toEqual(parsed.cues.map((c) => [c.startTime, c.endTime]));
    expect(translated.cues.map((c) => (c.tree.children[0] as { value?: string }).value)).toEqual(parsed.cues.map((c) => (c.tree.children[0] as { value?: string }).value));
    console.log(`spoken dialogue: ${parsed.cues.length} cues, reading speed max ${Math.max(...rates).toFixed(1)} chars/s, cue lengths ${parsed.cues.map((c) => (c.endTime - c.startTime).toFixed(1)).join(' ')} s`);
  });
});
