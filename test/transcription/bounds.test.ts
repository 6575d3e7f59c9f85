import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { readEvents } from '../../jobs/events.js';
import { findFfmpeg, type Tool } from '../../core/tools.js';
import { checkWorkFolder, clockText, folderBytes, parseDuration } from '../../transcription/bounds.js';
import { downloadAudio, probeDuration } from '../../transcription/media.js';
import { tones, VideoSite } from '../../fakes/media.js';
import { isFinished, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * Bounds on media (transcription/bounds.ts): the longest media a job takes and the most its work folder holds,
 * checked before anything large is written; a job over one fails at once saying which bound and which setting.
 */
let dir: string;
let ffmpeg: Tool;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bounds-'));
  ffmpeg = await findFfmpeg(createLogger('silent'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));
const ctx = () => ({ signal: new AbortController().signal, heartbeat: () => undefined, timeoutMs: 60_000 });

describe('measuring', () => {
  it("reads the length from the media's header, and the bytes of a folder", async () => {
    expect(parseDuration('  Duration: 01:02:03.45, start: 0.000000, bitrate: 256 kb/s')).toBeCloseTo(3723.45, 6);
    expect(parseDuration('  Duration: N/A, start: 0.000000, bitrate: N/A')).toBeUndefined();
    expect(clockText(3723.45)).toBe('1:02:03');
    expect(clockText(65)).toBe('1:05');
    const file = path.join(dir, 'three.wav');
    await fs.writeFile(file, tones([{ hz: 440, seconds: 3 }]));
    expect(await probeDuration(ffmpeg, file, ctx())).toBeCloseTo(3, 2);
    await fs.mkdir(path.join(dir, 'nested', 'deeper'), { recursive: true });
    await fs.writeFile(path.join(dir, 'nested', 'a'), 'x'.repeat(10));
    await fs.writeFile(path.join(dir, 'nested', 'deeper', 'b'), 'x'.repeat(5));
    expect(await folderBytes(path.join(dir, 'nested'))).toBe(15);
    expect(await folderBytes(path.join(dir, 'missing'))).toBe(0);
    // What an earlier attempt of the same step left is not counted against this one.
    const run = path.join(dir, 'run');
    for (const [folder, bytes] of [['download-1', 100], ['audio-1', 400], ['audio-2', 50]] as const) {
      await fs.mkdir(path.join(run, folder), { recursive: true });
      await fs.writeFile(path.join(run, folder, 'f'), 'x'.repeat(bytes));
    }
    const b = { maxDurationSeconds: 60, workMaxBytes: 600 };
    await expect(checkWorkFolder(run, b, 100, 'the converted audio')).rejects.toMatchObject({ code: 'WORK_FOLDER_TOO_LARGE' });
    await expect(checkWorkFolder(run, b, 100, 'the converted audio', { step: 'audio', folder: 'audio-2' })).resolves.toBeUndefined();
    await expect(checkWorkFolder(run, b, 500, 'the converted audio', { step: 'audio', folder: 'audio-2' })).rejects.toMatchObject({ code: 'WORK_FOLDER_TOO_LARGE' });
  });
});

describe('yt-dlp', () => {
  /** A yt-dlp that records its arguments and, as the real one does for a filtered video, downloads nothing. */
  async function fakeYtDlp(stdout: string): Promise<{ tool: Tool; args: () => Promise<string[]> }> {
    const bin = await fs.mkdtemp(path.join(dir, 'ytdlp-'));
    const command = path.join(bin, 'yt-dlp');
    await fs.writeFile(command, `#!/bin/sh\nprintf '%s\\n' "$@" > "${bin}/args"\nprintf '${stdout}'\n`, { mode: 0o755 });
    return {
      tool: { name: 'yt-dlp', command, args: [], env: {}, source: 'test', version: 'fake' },
      args: async () => (await fs.readFile(path.join(bin, 'args'), 'utf8')).trim().split('\n'),
    };
  }
  const bounds = { maxDurationSeconds: 600, workMaxBytes: 50 * 1024 * 1024 };

  it('is given the duration filter and the size limit, and a video it skips fails with the bound it is over', async () => {
    const skipped = await fakeYtDlp('');
    const run = () => downloadAudio(skipped.tool, 'https://video.example/v', path.join(dir, 'dl-1'), { ...ctx(), proxy: 'http://127.0.0.1:9', bounds });
    await expect(run()).rejects.toMatchObject({ name: 'PermanentError', code: 'MEDIA_TOO_LONG', message: expect.stringMatching(/^MEDIA_TOO_LONG: .*TRANSCRIPTION_MAX_DURATION_SECONDS \(now 600\)/) });
    const args = await skipped.args();
    expect(args.slice(args.indexOf('--match-filter'), args.indexOf('--match-filter') + 2)).toEqual(['--match-filter', 'duration <=? 600']);
    expect(args.slice(args.indexOf('--max-filesize'), args.indexOf('--max-filesize') + 2)).toEqual(['--max-filesize', String(50 * 1024 * 1024)]);

    // Stopped at --max-filesize: the page was read (its metadata printed), nothing written.
    const stopped = await fakeYtDlp('gristmill-meta 300 NA\\n');
    await expect(downloadAudio(stopped.tool, 'https://video.example/v', path.join(dir, 'dl-0'), { ...ctx(), proxy: 'http://127.0.0.1:9', bounds })).rejects.toMatchObject({
      code: 'WORK_FOLDER_TOO_LARGE',
      message: expect.stringMatching(/^WORK_FOLDER_TOO_LARGE: the download \(yt-dlp stopped it at TRANSCRIPTION_WORK_MAX_BYTES\) would take the job's work folder over 50 MB/),
    });
    const large = await fakeYtDlp('gristmill-meta 300 90000000\\n');
    await expect(downloadAudio(large.tool, 'https://video.example/v', path.join(dir, 'dl-2'), { ...ctx(), proxy: 'http://127.0.0.1:9', bounds })).rejects.toMatchObject({
      code: 'WORK_FOLDER_TOO_LARGE',
      message: expect.stringMatching(/TRANSCRIPTION_WORK_MAX_BYTES/),
    });
    const long = await fakeYtDlp('gristmill-meta 7200 NA\\n');
    await expect(downloadAudio(long.tool, 'https://video.example/v', path.join(dir, 'dl-3'), { ...ctx(), proxy: 'http://127.0.0.1:9', bounds })).rejects.toThrow(
      /^MEDIA_TOO_LONG: the media is 2:00:00 long, over the longest a job takes, 10:00/,
    );
  });
});

describe('jobs over a bound', () => {
  let h: TranscriptionHarness;
  beforeAll(async () => {
    h = await startTranscriptionHarness({ env: { ASR_BACKEND: 'openai', TRANSCRIPTION_MAX_DURATION_SECONDS: '3', TRANSCRIPTION_WORK_MAX_BYTES: '80kb' } });
  });
  afterAll(() => h?.stop());

  it('a video page that says it is too long: the real yt-dlp skips the download, and the job fails at once', async () => {
    const site = await VideoSite.start();
    try {
      const url = site.add('long-talk', { title: 'Long talk', media: tones([{ hz: 440, seconds: 10 }]), duration: 10 });
      const res = await fetch(`${h.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, mode: 'none' }) });
      expect(res.status).toBe(201);
      const id = ((await res.json()) as { id: string }).id;
      const job = await waitForJob(h.url, id, isFinished, 120_000);
      expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/^MEDIA_TOO_LONG: .*yt-dlp read it from the page and skipped the download.*TRANSCRIPTION_MAX_DURATION_SECONDS \(now 3\)/) });
      expect(site.hits).toContain('/watch/long-talk');
      // Nothing was downloaded or converted (yt-dlp only probes the media URL as it reads the page).
      const stages = (await readEvents(h.stack.orm.em.fork(), `job:${id}`, 0)).map((e) => e.data.stage);
      expect(stages).toContain('downloading');
      expect(stages).not.toContain('preparing');
    } finally {
      await site.close();
    }
  }, 150_000);

  it('longer than TRANSCRIPTION_MAX_DURATION_SECONDS: fails before conversion, nothing sent to the backend', async () => {
    const created = await uploadJob(h.url, { bytes: tones([{ hz: 440, seconds: 4 }]), name: 'long.wav' }, { mode: 'none' });
    const job = await waitForJob(h.url, created.body.id, isFinished, 60_000);
    expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/^MEDIA_TOO_LONG: the media is 0:04 long, over the longest a job takes, 0:03 .*raise TRANSCRIPTION_MAX_DURATION_SECONDS \(now 3\)/) });
    expect(job.appliedMode).toBeNull();
    expect(h.asr.syncRequests.filter((r) => r.fileName.startsWith(created.body.id))).toEqual([]);
  });

  it('a WAV streamed with no sizes in its header fails too (the length is estimated, or the capped conversion reaches the bound)', async () => {
    const audio = tones([{ hz: 440, seconds: 5 }]);
    audio.writeUInt32LE(0xffffffff, 4);
    audio.writeUInt32LE(0xffffffff, 40);
    const created = await uploadJob(h.url, { bytes: audio, name: 'stream.wav' }, { mode: 'none' });
    const job = await waitForJob(h.url, created.body.id, isFinished, 60_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^(MEDIA_TOO_LONG|WORK_FOLDER_TOO_LARGE): /);
  });

  it('more than TRANSCRIPTION_WORK_MAX_BYTES of converted audio: fails before conversion; less is transcribed', async () => {
    // 2.9 s is within the 3 s bound, but its 16 kHz WAV is 92,844 bytes, over 80 KB.
    const over = await uploadJob(h.url, { bytes: tones([{ hz: 440, seconds: 2.9 }]), name: 'big.wav' }, { mode: 'none' });
    const failed = await waitForJob(h.url, over.body.id, isFinished, 60_000);
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringMatching(/^WORK_FOLDER_TOO_LARGE: the converted audio would take the job's work folder to 91 KB, over 80 KB; raise TRANSCRIPTION_WORK_MAX_BYTES \(now 81920\)/) });
    expect(failed.appliedMode).toBeNull();
    const fits = await uploadJob(h.url, { bytes: tones([{ hz: 440, seconds: 2 }]), name: 'fits.wav' }, { mode: 'none' });
    expect((await waitForJob(h.url, fits.body.id, isFinished, 60_000)).status).toBe('done');
  });
});
