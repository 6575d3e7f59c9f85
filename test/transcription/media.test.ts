import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermanentError } from '../../core/errors.js';
import { createLogger } from '../../core/log.js';
import { findFfmpeg, findYtDlp, type Tool, YTDLP_VERSION } from '../../core/tools.js';
import { prepareAudio, runTool, ToolError } from '../../transcription/media.js';
import { wav } from '../../fakes/media.js';

const log = createLogger('silent');
let dir: string;
let ffmpeg: Tool;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-media-'));
  ffmpeg = await findFfmpeg(log);
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

const ctx = (signal = new AbortController().signal) => ({ signal, heartbeat: () => undefined, timeoutMs: 60_000 });

async function script(name: string, body: string): Promise<string> {
  const bin = await fs.mkdtemp(path.join(dir, 'bin-'));
  await fs.writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return bin;
}

describe('finding ffmpeg', () => {
  it('takes FFMPEG_PATH first, then PATH, then the @ffmpeg-installer package', async () => {
    const bin = await script('ffmpeg', 'echo "ffmpeg version 9.9-fake"');
    expect(await findFfmpeg(log, { env: { PATH: bin } })).toMatchObject({ source: 'PATH', version: 'ffmpeg version 9.9-fake', command: path.join(bin, 'ffmpeg') });
    const fromPackage = await findFfmpeg(log, { env: { PATH: '' } });
    expect(fromPackage.source).toBe('@ffmpeg-installer/ffmpeg');
    expect(fromPackage.version).toMatch(/^ffmpeg version/);
    expect(await findFfmpeg(log, { explicit: fromPackage.command, env: { PATH: bin } })).toMatchObject({ source: 'FFMPEG_PATH' });
    await expect(findFfmpeg(log, { explicit: path.join(dir, 'nope') })).rejects.toThrow(/FFMPEG_PATH points at .*nope, which is not an executable file/);
  });
});

describe('finding yt-dlp', () => {
  it('takes YTDLP_PATH, then PATH, then the pinned release in the user cache (installed with pip when missing)', async () => {
    const bin = await script('yt-dlp', 'echo 2099.01.01');
    expect(await findYtDlp(log, { env: { PATH: bin } })).toMatchObject({ source: 'PATH', version: '2099.01.01' });
    expect(await findYtDlp(log, { explicit: path.join(bin, 'yt-dlp') })).toMatchObject({ source: 'YTDLP_PATH' });
    const cached = await findYtDlp(log, { env: { ...process.env, PATH: withoutYtDlp(process.env.PATH) } });
    expect(cached).toMatchObject({ version: YTDLP_VERSION, args: ['-m', 'yt_dlp'] });
    expect(cached.env.PYTHONPATH).toMatch(new RegExp(`yt-dlp/${YTDLP_VERSION.replace(/\./g, '\\.')}$`));
  }, 120_000);

  it('says every way to get it when it cannot', async () => {
    const empty = await fs.mkdtemp(path.join(dir, 'cache-'));
    const err = await findYtDlp(log, { env: { PATH: '', GRISTMILL_CACHE_DIR: empty }, install: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain('yt-dlp was not found and could not be installed (cache: python3 is not on PATH)');
    expect((err as Error).message).toContain('set YTDLP_PATH');
    expect((err as Error).message).toContain(`yt-dlp ${YTDLP_VERSION} can be installed into ${path.join(empty, 'yt-dlp', YTDLP_VERSION)}`);
  });
});

function withoutYtDlp(PATH = ''): string {
  // Keep python3 reachable, drop any yt-dlp: the cache is what is tested.
  return PATH.split(path.delimiter)
    .filter((d) => !existsSync(path.join(d, 'yt-dlp')))
    .join(path.delimiter);
}

describe('audio processing with ffmpeg', () => {
  const header = async (file: string) => {
    const b = await fs.readFile(file);
    return { riff: b.subarray(0, 4).toString(), channels: b.readUInt16LE(22), rate: b.readUInt32LE(24), bits: b.readUInt16LE(34), size: b.length };
  };

  it.each(['none', 'standard', 'aggressive'] as const)('mode %s gives 16 kHz mono 16-bit WAV', async (mode) => {
    const input = path.join(dir, `in-${mode}.wav`);
    await fs.writeFile(input, wav({ seconds: 2, sampleRate: 44_100, noise: 0.01, pauses: true }));
    const out = await prepareAudio(ffmpeg, input, path.join(dir, `out-${mode}.wav`), mode, ctx());
    expect(out).toMatchObject({ mode, reason: 'requested' });
    expect(await header(out.file)).toMatchObject({ riff: 'RIFF', channels: 1, rate: 16_000, bits: 16 });
    expect(out.bytes).toBeGreaterThan(44 + 1.9 * 32_000);
  });

  it.each([
    ['a clean recording', { amplitude: 0.5, pauses: true }, 'none'],
    ['steady loud noise', { amplitude: 0.3, noise: 0.05, pauses: true }, 'aggressive'],
    ['audible hiss', { amplitude: 0.5, noise: 0.002, pauses: true }, 'standard'],
    ['quiet speech', { amplitude: 0.02, noise: 0.0001, pauses: true }, 'standard'],
  ])('auto measures %s and chooses %s', async (name, options, expected) => {
    const input = path.join(dir, `auto-${name.replace(/\s+/g, '-')}.wav`);
    await fs.writeFile(input, wav({ seconds: 3, ...options }));
    const out = await prepareAudio(ffmpeg, input, `${input}.out.wav`, 'auto', ctx());
    expect(out.mode).toBe(expected);
    expect(out.measurement!.windows).toBe(60);
    expect(out.reason).not.toBe('requested');
  });

  it('refuses input that is not media, for good (no retry)', async () => {
    const input = path.join(dir, 'notes.wav');
    await fs.writeFile(input, 'these are not samples');
    await expect(prepareAudio(ffmpeg, input, path.join(dir, 'x.wav'), 'none', ctx())).rejects.toBeInstanceOf(PermanentError);
    await expect(prepareAudio(ffmpeg, input, path.join(dir, 'x.wav'), 'auto', ctx())).rejects.toThrow(/no audio ffmpeg can read/);
    expect(await fs.readdir(dir)).not.toContain('x.wav.part.wav');
  });

  it('kills the tool when the activity is cancelled', async () => {
    const abort = new AbortController();
    const t0 = Date.now();
    const running = runTool(ffmpeg, ['-hide_banner', '-re', '-f', 'lavfi', '-i', 'sine=duration=600', '-f', 'null', '-'], ctx(abort.signal));
    setTimeout(() => abort.abort(new Error('cancelled by the test')), 300);
    await expect(running).rejects.toThrow('cancelled by the test');
    expect(Date.now() - t0).toBeLessThan(5000);
    const failed = await runTool(ffmpeg, ['-hide_banner', '-i', path.join(dir, 'missing.wav'), '-f', 'null', '-'], ctx()).catch((e: Error) => e);
    expect(failed).toBeInstanceOf(ToolError);
    expect((failed as Error).message).toMatch(/^ffmpeg failed \(exit 1\): .*missing\.wav: No such file or directory/);
  });
});
