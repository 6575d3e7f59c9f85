import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byteRange } from '../../transcription/byte-range.js';
import { json } from '../support/http.js';
import { isFinished, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/** The compressed copy of a job's audio that the web page plays segments from, and its route with Range. */
let h: TranscriptionHarness;
beforeAll(async () => {
  h = await startTranscriptionHarness();
}, 300_000);
afterAll(() => h?.stop());

describe("a job's audio for playback", () => {
  it('is kept as Opus in WebM beside the transcript and served with ranges', { timeout: 90_000 }, async () => {
    const audio = smallWav(3);
    const created = await uploadJob(h.url, { bytes: audio, name: 'talk.wav' }, { mode: 'none' });
    const id = created.body.id;
    const submission = await h.asr.waitForJob(id);
    await h.asr.complete(submission, [{ start: 0, end: 3, text: 'a talk' }]);
    expect(await waitForJob(h.url, id, isFinished)).toMatchObject({ status: 'done' });

    const stored = path.join(h.stack.dataDir, 'audio', id, 'audio.webm');
    const size = (await fs.stat(stored)).size;
    // 24 kbit/s for 3 s: about 9 KB plus the container, against 96 KB of WAV.
    expect(size).toBeGreaterThan(2_000);
    expect(size).toBeLessThan(audio.length / 4);

    const whole = await fetch(`${h.url}/api/jobs/${id}/audio`);
    expect([whole.status, whole.headers.get('content-type'), whole.headers.get('accept-ranges'), Number(whole.headers.get('content-length'))]).toEqual([200, 'audio/webm', 'bytes', size]);
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('hex')).toBe('1a45dfa3'); // EBML: a Matroska/WebM file
    expect(bytes.includes(Buffer.from('OpusHead'))).toBe(true);

    const part = await fetch(`${h.url}/api/jobs/${id}/audio`, { headers: { Range: 'bytes=100-199' } });
    expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 100-199/${size}`]);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));
    const tail = await fetch(`${h.url}/api/jobs/${id}/audio`, { headers: { Range: 'bytes=-10' } });
    expect([tail.status, (await tail.arrayBuffer()).byteLength]).toEqual([206, 10]);
    const outside = await fetch(`${h.url}/api/jobs/${id}/audio`, { headers: { Range: `bytes=${size}-` } });
    expect([outside.status, outside.headers.get('content-range')]).toEqual([416, `bytes */${size}`]);

    await fs.rm(path.dirname(stored), { recursive: true });
    const none = await fetch(`${h.url}/api/jobs/${id}/audio`);
    expect([none.status, (await json(none)).code]).toEqual([404, 'AUDIO_NOT_AVAILABLE']);
    expect((await fetch(`${h.url}/api/jobs/00000000-0000-4000-8000-000000000000/audio`)).status).toBe(404);
  });
});

describe('a Range header', () => {
  it('gives one range, the tail, the rest, or nothing usable', () => {
    expect(byteRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(byteRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange('bytes=990-5000', 1000)).toEqual({ start: 990, end: 999 });
    expect(byteRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(byteRange('bytes=5-2', 1000)).toBe('unsatisfiable');
    expect(byteRange(undefined, 1000)).toBeUndefined();
    expect(byteRange('bytes=0-1,5-6', 1000)).toBeUndefined();
    expect(byteRange('items=0-1', 1000)).toBeUndefined();
  });
});
