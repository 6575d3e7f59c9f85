import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FfmpegWrapper, writeFfmpegWrapper } from '../support/ffmpeg-wrapper.js';
import type { Json } from '../support/http.js';
import { smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Fault: a step that hangs (here ffmpeg, stuck with no output and no CPU, as on a dead network mount) while its
 * worker lives on. Heartbeats prove progress, not life (activities/heartbeat.ts): the step is stopped once it has
 * not moved for its heartbeat timeout and tried again, long before TRANSCRIPTION_MEDIA_TIMEOUT_MS.
 */
let h: TranscriptionHarness;
let bin: string;
let ffmpeg: FfmpegWrapper;

beforeAll(async () => {
  bin = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-hung-'));
  ffmpeg = await writeFfmpegWrapper(bin, 'hang');
  h = await startTranscriptionHarness({ env: { FFMPEG_PATH: ffmpeg.path, TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '3000', TRANSCRIPTION_MEDIA_TIMEOUT_MS: '600000' } });
});
afterAll(async () => {
  await h?.stop();
  await fs.rm(bin, { recursive: true, force: true });
});

describe('a step that hangs on a live worker', () => {
  it('is stopped after its heartbeat timeout without progress, and tried again', { timeout: 120_000 }, async () => {
    await ffmpeg.arm();
    h.asr.setModel('ready');
    h.asr.autoCompleteMs = 200;
    const created = await uploadJob(h.url, { bytes: smallWav(2), name: 'hung.wav' }, { mode: 'none' });
    const done = await waitForJob(h.url, created.body.id, (j: Json) => ['done', 'failed'].includes(j.status), 90_000);
    expect(done.status, JSON.stringify(done)).toBe('done');
    const conversions = (await ffmpeg.runs()).filter((r) => r.conversion);
    expect(conversions).toHaveLength(2);
    // The second began soon after the first stalled: seconds, not the ten minutes of the media timeout.
    expect(conversions[1]!.at - conversions[0]!.at).toBeLessThan(45_000);
  });
});
