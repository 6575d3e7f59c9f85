import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { findFfmpeg } from '../../runtime/tools.js';
import type { Json } from '../support/http.js';
import { smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Fault: a step that hangs (here ffmpeg, stuck with no output and no CPU, as on a dead network mount) while its
 * worker lives on. Heartbeats prove progress, not life (activities/heartbeat.ts): the step is stopped once it has
 * not moved for its heartbeat timeout and tried again, long before TRANSCRIPTION_MEDIA_TIMEOUT_MS.
 */
let h: TranscriptionHarness;
let bin: string;

beforeAll(async () => {
  bin = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-hung-'));
  const real = await findFfmpeg(createLogger('silent'));
  const wrapper = path.join(bin, 'ffmpeg');
  await fs.writeFile(
    wrapper,
    `#!${process.execPath}
const fs = require('fs'); const path = require('path'); const { spawnSync } = require('child_process');
const args = process.argv.slice(2);
const real = ${JSON.stringify([real.command, ...real.args])};
if (!args.includes('-version')) fs.appendFileSync(path.join(__dirname, 'calls.jsonl'), JSON.stringify({ at: Date.now(), conversion: args.includes('pcm_s16le') }) + '\\n');
if (args.includes('pcm_s16le') && fs.existsSync(path.join(__dirname, 'hang'))) {
  fs.rmSync(path.join(__dirname, 'hang'));
  setTimeout(() => undefined, 3_600_000); // stuck: no output, no CPU
} else {
  const r = spawnSync(real[0], [...real.slice(1), ...args], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
`,
    { mode: 0o755 },
  );
  h = await startTranscriptionHarness({ env: { FFMPEG_PATH: wrapper, TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '3000', TRANSCRIPTION_MEDIA_TIMEOUT_MS: '600000' } });
});
afterAll(async () => {
  await h?.stop();
  await fs.rm(bin, { recursive: true, force: true });
});

describe('a step that hangs on a live worker', () => {
  it('is stopped after its heartbeat timeout without progress, and tried again', { timeout: 120_000 }, async () => {
    await fs.writeFile(path.join(bin, 'hang'), '');
    h.asr.setModel('ready');
    h.asr.autoCompleteMs = 200;
    const created = await uploadJob(h.url, { bytes: smallWav(2), name: 'hung.wav' }, { mode: 'none' });
    const done = await waitForJob(h.url, created.body.id, (j: Json) => ['done', 'failed'].includes(j.status), 90_000);
    expect(done.status, JSON.stringify(done)).toBe('done');
    const calls = (await fs.readFile(path.join(bin, 'calls.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { at: number; conversion: boolean });
    const conversions = calls.filter((c) => c.conversion);
    expect(conversions).toHaveLength(2);
    // The second began soon after the first stalled: seconds, not the ten minutes of the media timeout.
    expect(conversions[1]!.at - conversions[0]!.at).toBeLessThan(45_000);
  });
});
