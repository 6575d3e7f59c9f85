import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { PermanentError, RecoverableError } from '../../core/errors.js';
import { createLogger } from '../../core/log.js';
import { findFfmpeg, type Tool } from '../../core/tools.js';
import { postAudio } from '../../transcription/backends/http.js';
import { syncBackend } from '../../transcription/backends/index.js';
import type { AudioFile, SyncBackend } from '../../transcription/backends/types.js';
import { resetTranscriptionCapabilities } from '../../transcription/backends/openai.js';
import { segmentsFromAnswer, stitchChunks } from '../../transcription/backends/segments.js';
import {
  detectSilences,
  maxChunkSeconds,
  parseSilences,
  parseWavHeader,
  planChunks,
  readWavInfo,
  wavHeader,
  writeChunks,
} from '../../transcription/chunks.js';
import { FakeAsr } from '../../fakes/fake-asr.js';
import { tones } from '../../fakes/media.js';
import { freePort } from '../../fakes/ports.js';

/** Pure parts of the synchronous backends, and each client against the fake speaking its server's protocol. */
let dir: string;
let asr: FakeAsr;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-backends-'));
  asr = await FakeAsr.start();
});
afterAll(async () => {
  await asr?.close();
  await fs.rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  asr.syncRequests.length = 0;
  asr.syncScript.length = 0;
  asr.syncDelayMs = 0;
  asr.openaiStyle = 'openai';
  asr.apiKey = undefined;
  asr.setModel('ready');
  resetTranscriptionCapabilities();
});

describe('reading an answer', () => {
  it("takes OpenAI's verbose_json and whisper-asr-webservice's JSON: times in seconds, text trimmed", () => {
    const verbose = {
      task: 'transcribe', language: 'english', duration: 9.5, text: ' Hello there. General Kenobi.',
      segments: [
        { id: 0, seek: 0, start: 0.0, end: 2.4, text: ' Hello there.', tokens: [50364, 2425], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
        { id: 1, seek: 0, start: 2.4, end: 4.96, text: ' General  Kenobi.', tokens: [50414], temperature: 0, avg_logprob: -0.3, compression_ratio: 1, no_speech_prob: 0.02 },
      ],
    };
    expect(segmentsFromAnswer(verbose, 9.5)).toEqual([
      { start: 0, end: 2.4, text: 'Hello there.' },
      { start: 2.4, end: 4.96, text: 'General Kenobi.' },
    ]);
    const whisperAsr = { language: 'en', text: ' a b', segments: [{ id: 1, seek: 0, start: '1.5', end: 3, text: ' a b', words: null }] };
    expect(segmentsFromAnswer(whisperAsr, 4)).toEqual([{ start: 1.5, end: 3, text: 'a b' }]);
  });

  it('tells the unit of the times by their size: LocalAI answers nanoseconds, some servers milliseconds', () => {
    const localai = { text: 'x y', segments: [{ id: 0, start: 1_500_000_000, end: 4_250_000_000, text: ' x', tokens: [1] }, { id: 1, start: 4_250_000_000, end: 7_000_000_000, text: 'y' }] };
    expect(segmentsFromAnswer(localai, 8)).toEqual([
      { start: 1.5, end: 4.25, text: 'x' },
      { start: 4.25, end: 7, text: 'y' },
    ]);
    expect(segmentsFromAnswer({ segments: [{ start: 1500, end: 4250, text: 'ms' }] }, 8)).toEqual([{ start: 1.5, end: 4.25, text: 'ms' }]);
    // Whisper may run a last segment past a short clip (its 30-second window): seconds still, and cut to the clip.
    expect(segmentsFromAnswer({ segments: [{ start: 1, end: 29.98, text: 'tail' }] }, 3)).toEqual([{ start: 1, end: 3, text: 'tail' }]);
  });

  it('makes one segment of a text-only answer; an empty transcript is empty; anything else is not an answer', () => {
    expect(segmentsFromAnswer({ text: ' Only words here. ', usage: { type: 'duration', seconds: 12 } }, 11.5)).toEqual([{ start: 0, end: 11.5, text: 'Only words here.' }]);
    expect(segmentsFromAnswer({ text: '', segments: [] }, 3)).toEqual([]);
    expect(segmentsFromAnswer({ text: 'words', segments: [] }, 3)).toEqual([{ start: 0, end: 3, text: 'words' }]);
    expect(segmentsFromAnswer({ segments: [{ start: 0, end: 1 }, null, 'x', { start: 0, end: 1, text: '  ' }] }, 3)).toEqual([]);
    expect(segmentsFromAnswer({ error: 'failed to read audio data' }, 3)).toBeUndefined();
    expect(segmentsFromAnswer([{ text: 'x' }], 3)).toBeUndefined();
    expect(segmentsFromAnswer('text', 3)).toBeUndefined();
  });

  it('stitches chunks at their offsets, in order, never overlapping', () => {
    expect(
      stitchChunks([
        { start: 298.25, segments: [{ start: 0.5, end: 2, text: 'c' }] },
        { start: 0, segments: [{ start: 0, end: 1, text: 'a' }, { start: 290, end: 299.5, text: 'b' }] },
      ]),
    ).toEqual([
      { start: 0, end: 1, text: 'a' },
      { start: 290, end: 299.5, text: 'b' },
      // 'b' ran past the cut: 'c' starts where it ended.
      { start: 299.5, end: 300.25, text: 'c' },
    ]);
  });
});

describe('splitting audio', () => {
  it('reads WAV headers, also with chunks before the data and a streamed (unknown) size', () => {
    const format = { sampleRate: 16_000, channels: 1, bitsPerSample: 16, blockAlign: 2 };
    const plain = wavHeader(format, 32_000);
    expect(parseWavHeader(plain, 44 + 32_000)).toEqual({ ...format, dataOffset: 44, dataBytes: 32_000, seconds: 1 });
    const list = Buffer.concat([plain.subarray(0, 36), Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('INFOx\0'), plain.subarray(36)]);
    list.writeUInt32LE(0xffffffff, list.length - 4);
    expect(parseWavHeader(list, list.length + 16_001)).toMatchObject({ dataOffset: 58, dataBytes: 16_000, seconds: 0.5 });
    expect(() => parseWavHeader(Buffer.from('ID3 not a wave file'), 100)).toThrow(PermanentError);
  });

  it("reads silencedetect's report, a silence running to the end included", () => {
    const stderr = [
      '[silencedetect @ 0x55d] silence_start: 0.6',
      '[silencedetect @ 0x55d] silence_end: 1.00006 | silence_duration: 0.400062',
      'size=N/A time=00:00:02.00 bitrate=N/A',
      '[silencedetect @ 0x55d] silence_start: 1.6',
    ].join('\n');
    expect(parseSilences(stderr, 2)).toEqual([
      { start: 0.6, end: 1.00006 },
      { start: 1.6, end: 2 },
    ]);
  });

  it('cuts in the middle of the last silence in the second half of what fits, or at the limit when there is none', () => {
    const silences = [
      { start: 2, end: 2.5 }, // first half of the first window: too early
      { start: 6, end: 7 },
      { start: 8, end: 8.4 }, // the last that fits: cut at 8.2
      { start: 10.5, end: 11 }, // past the limit
      { start: 14, end: 14.2 },
    ];
    expect(planChunks(25, silences, 10)).toEqual([
      { start: 0, end: 8.2, atSilence: true },
      { start: 8.2, end: 14.1, atSilence: true },
      { start: 14.1, end: 24.1, atSilence: false },
      { start: 24.1, end: 25, atSilence: true },
    ]);
    expect(planChunks(9, silences, 10)).toEqual([{ start: 0, end: 9, atSilence: true }]);
    // A silence that crosses the limit counts only up to it.
    expect(planChunks(20, [{ start: 9, end: 12 }], 10)[0]).toEqual({ start: 0, end: 9.5, atSilence: true });
  });

  it('writes chunks under the size limit, cut at silences ffmpeg found, holding exactly the original samples', async () => {
    const ffmpeg: Tool = await findFfmpeg(createLogger('silent'));
    const source = path.join(dir, 'long.wav');
    const parts = Array.from({ length: 10 }, (_, k) => [{ hz: 300 + 50 * k, seconds: 0.6 }, { seconds: 0.4 }]).flat();
    await fs.writeFile(source, tones(parts));
    const info = await readWavInfo(source);
    expect(info).toMatchObject({ sampleRate: 16_000, channels: 1, dataBytes: 320_000, seconds: 10 });
    const maxBytes = 100 * 1024;
    const ctx = { signal: new AbortController().signal, heartbeat: () => undefined, timeoutMs: 60_000 };
    const silences = await detectSilences(ffmpeg, source, info.seconds, ctx);
    expect(silences).toHaveLength(10);
    const plan = planChunks(info.seconds, silences, maxChunkSeconds(info, maxBytes));
    const chunks = await writeChunks(source, info, plan, path.join(dir, 'chunks'));
    expect(chunks.length).toBe(4);
    for (const c of chunks) {
      expect(c.bytes).toBeLessThanOrEqual(maxBytes);
      expect((await fs.stat(c.file)).size).toBe(c.bytes);
      // Each cut lies in a silence: 0.6 to 1.0 s past a whole second.
      if (c.start > 0) expect(c.start % 1).toBeGreaterThanOrEqual(0.6);
    }
    const joined = Buffer.concat(await Promise.all(chunks.map(async (c) => (await fs.readFile(c.file)).subarray(44))));
    expect(joined.equals((await fs.readFile(source)).subarray(44))).toBe(true);
    expect(chunks.map((c) => c.start + c.seconds).at(-1)).toBeCloseTo(10, 5);
  });
});

/** A client of the configured kind against the fake, and a 3-second clip with two tones. */
function client(env: Record<string, string>): SyncBackend {
  return syncBackend(loadConfig({ ASR_BASE_URL: asr.url, ...env }).transcription);
}
let clip: AudioFile;
beforeAll(async () => {
  const file = path.join(dir, 'clip.wav');
  await fs.writeFile(file, tones([{ hz: 400, seconds: 1 }, { seconds: 0.5 }, { hz: 600, seconds: 1 }, { seconds: 0.5 }]));
  clip = { path: file, name: 'job-1.wav', seconds: 3 };
});
const call = (b: SyncBackend, signal = new AbortController().signal) => b.transcribe(clip, { signal, timeoutMs: 30_000 });
const words = (start: number) => ['tone', String(start ? 600 : 400), 'hertz'].map((word, i) => ({ word, start: Math.round((start + i / 3) * 1000) / 1000, end: Math.round((start + (i + 1) / 3) * 1000) / 1000 }));
/** What the fake hears in `clip`, with the word times every protocol gives when asked. */
const heard = [
  { start: 0, end: 1, text: 'tone 400 hertz', words: words(0) },
  { start: 1.5, end: 2.5, text: 'tone 600 hertz', words: words(1.5) },
];

describe('the OpenAI-compatible client', () => {
  it('posts file, model, verbose_json with segment timestamps, temperature and language, with the key', async () => {
    const b = client({ ASR_BACKEND: 'openai', ASR_API_KEY: 'sk-test-asr-0123456789', ASR_LANGUAGE: 'en' });
    asr.apiKey = 'sk-test-asr-0123456789';
    expect(await call(b)).toEqual({ kind: 'segments', segments: heard });
    const [req] = asr.syncRequests;
    expect(req).toMatchObject({ protocol: 'openai', path: '/v1/audio/transcriptions', fileField: 'file', fileName: 'job-1.wav', fileType: 'audio/wav', isWav: true, seconds: 3, status: 200 });
    expect(req!.fields).toEqual([
      ['model', 'whisper-1'],
      ['response_format', 'verbose_json'],
      ['timestamp_granularities[]', 'segment'],
      ['timestamp_granularities[]', 'word'],
      ['temperature', '0'],
      ['language', 'en'],
    ]);
    expect(req!.authorization).toBe('Bearer sk-test-asr-0123456789');
  });

  it('takes a base URL with or without /v1, and reads LocalAI’s nanoseconds', async () => {
    asr.openaiStyle = 'localai';
    const withoutWords = heard.map(({ words: _, ...rest }) => rest);
    expect(await call(client({ ASR_BACKEND: 'openai', ASR_BASE_URL: `${asr.url}/v1/` }))).toEqual({ kind: 'segments', segments: withoutWords });
    expect(asr.syncRequests.map((r) => r.path)).toEqual(['/v1/audio/transcriptions']);
  });

  it('asks a text-only model (gpt-4o-transcribe) again for json, and remembers it', async () => {
    const b = client({ ASR_BACKEND: 'openai', ASR_MODEL: 'gpt-4o-transcribe' });
    expect(await call(b)).toEqual({ kind: 'segments', segments: [{ start: 0, end: 3, text: 'tone 400 hertz tone 600 hertz' }] });
    expect(await call(b)).toMatchObject({ kind: 'segments' });
    const formats = asr.syncRequests.map((r) => [r.status, r.fields.find(([n]) => n === 'response_format')![1]]);
    expect(formats).toEqual([[400, 'verbose_json'], [200, 'json'], [200, 'json']]);
    expect(asr.syncRequests[1]!.fields.map(([n]) => n)).not.toContain('timestamp_granularities[]');
  });

  it('503 is busy with Retry-After; 429 and 5xx are recoverable with it; quota, key, size and other 4xx are permanent', async () => {
    const b = client({ ASR_BACKEND: 'openai' });
    asr.setModel('loading');
    asr.retryAfterSeconds = 7;
    expect(await call(b)).toEqual({ kind: 'busy', retryAfterMs: 7000 });
    asr.setModel('ready');
    asr.syncScript.push(
      { status: 429, headers: { 'retry-after': '20' }, body: { error: { message: 'Rate limit reached for model `whisper-large-v3` in organization org_1 on seconds of audio per hour (ASPH): Limit 7200, Used 7190. Please try again in 20s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing', type: 'seconds', code: 'rate_limit_exceeded' } } },
      { status: 502, body: '<html>Bad Gateway</html>' },
      { status: 429, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } } },
      { status: 401, body: { error: { message: 'Incorrect API key provided: sk-wrong.', type: 'invalid_request_error', code: 'invalid_api_key' } } },
      { status: 413, body: { error: { message: 'Maximum content size limit (26214400) exceeded (26283642 bytes read)', type: 'server_error' } } },
      { status: 400, body: { error: { message: 'Audio file is too short. Minimum audio length is 0.1 seconds.', type: 'invalid_request_error' } } },
    );
    const rateLimited = await call(b).catch((e: unknown) => e);
    expect(rateLimited).toBeInstanceOf(RecoverableError);
    expect(rateLimited).toMatchObject({ retryAfterMs: 20_000, message: expect.stringMatching(/^The transcription backend answered 429: Rate limit reached/) });
    await expect(call(b)).rejects.toMatchObject({ name: 'RecoverableError', message: 'The transcription backend answered 502: <html>Bad Gateway</html>' });
    await expect(call(b)).rejects.toThrow(new PermanentError("The transcription backend answered 429: You exceeded your current quota, please check your plan and billing details. (the account's quota is used up: check its plan and billing)"));
    await expect(call(b)).rejects.toThrow(/^The transcription backend answered 401: Incorrect API key provided: sk-wrong\. \(check ASR_API_KEY\)$/);
    await expect(call(b)).rejects.toThrow(/413: .* \(the audio is over the server's size limit: lower ASR_CHUNK_MAX_BYTES\)$/);
    const short = await call(b).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(PermanentError);
    expect((short as Error).message).toBe('The transcription backend answered 400: Audio file is too short. Minimum audio length is 0.1 seconds.');
    // An answer far larger than any transcript of a chunk is not read to the end.
    asr.syncScript.push({ status: 200, body: 'x'.repeat(65 * 1024 * 1024) });
    await expect(call(b)).rejects.toThrow(new PermanentError('The transcription backend answered more than 67108864 bytes for one chunk of audio'));
    // A server that is not there: recoverable.
    const gone = syncBackend(loadConfig({ ASR_BACKEND: 'openai', ASR_BASE_URL: `http://127.0.0.1:${await freePort()}` }).transcription);
    await expect(call(gone)).rejects.toMatchObject({ name: 'RecoverableError', message: expect.stringMatching(/is unreachable: ECONNREFUSED/) });
  });

  it('aborts the request in flight when cancelled, and the server sees it', async () => {
    asr.syncDelayMs = 30_000;
    const abort = new AbortController();
    const pending = call(client({ ASR_BACKEND: 'openai' }), abort.signal);
    await asr.waitFor(() => asr.syncRequests[0]?.bytes, 10_000, 'the request');
    abort.abort(new Error('cancelled by the test'));
    await expect(pending).rejects.toThrow('cancelled by the test');
    await asr.waitFor(() => asr.syncRequests[0]!.aborted, 10_000, 'the server to see the abort');
    expect(asr.syncRequests[0]!.status).toBeUndefined();
  });
});

describe('a server that takes too long', () => {
  // A server that never answers (/hang) or stops in the middle of its answer (/stall): both are the request's time
  // limit running out, whether it ran out before the headers or while the body was read.
  let slow: http.Server;
  beforeAll(async () => {
    slow = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/stall') req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 }).write('{"text": "tone'));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
  });

  it('is a recoverable failure naming the time limit, before the answer or in the middle of it', async () => {
    const base = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    for (const route of ['/hang', '/stall']) {
      const sent = postAudio(`${base}${route}`, clip, 'file', [], { signal: new AbortController().signal, timeoutMs: 300, apiKey: undefined });
      await expect(sent).rejects.toMatchObject({ name: 'RecoverableError', message: 'The transcription backend did not answer within 300 ms (TRANSCRIPTION_MEDIA_TIMEOUT_MS)' });
    }
  });
});

describe('speakers and words', () => {
  const speakers = (labels: [string, string]) => heard.map((h, i) => ({ ...h, speaker: labels[i]! }));

  it('OpenAI: ASR_DIARIZE asks diarized_json with chunking_strategy=auto, and keeps each segment\'s speaker', async () => {
    const b = client({ ASR_BACKEND: 'openai', ASR_MODEL: 'gpt-4o-transcribe-diarize', ASR_DIARIZE: 'true' });
    expect(await call(b)).toEqual({ kind: 'segments', segments: speakers(['A', 'B']).map(({ words: _, ...rest }) => rest) });
    expect(asr.syncRequests[0]!.fields).toEqual([
      ['model', 'gpt-4o-transcribe-diarize'],
      ['response_format', 'diarized_json'],
      ['chunking_strategy', 'auto'],
      ['temperature', '0'],
    ]);
  });

  it('OpenAI: a model that refuses diarized_json is asked for verbose_json with words, and that is remembered', async () => {
    const b = client({ ASR_BACKEND: 'openai', ASR_MODEL: 'whisper-1', ASR_DIARIZE: 'true' });
    expect(await call(b)).toEqual({ kind: 'segments', segments: heard });
    expect(await call(b)).toEqual({ kind: 'segments', segments: heard });
    expect(asr.syncRequests.map((r) => [r.status, r.fields.find(([n]) => n === 'response_format')![1]])).toEqual([
      [400, 'diarized_json'],
      [200, 'verbose_json'],
      [200, 'verbose_json'],
    ]);
  });

  it('a server that refuses word times is asked for segments only, not for text only', async () => {
    asr.openaiWordTimes = false;
    try {
      const b = client({ ASR_BACKEND: 'openai' });
      expect(await call(b)).toEqual({ kind: 'segments', segments: heard.map(({ words: _, ...rest }) => rest) });
      await call(b);
      expect(asr.syncRequests.map((r) => [r.status, r.fields.filter(([n]) => n === 'timestamp_granularities[]').length])).toEqual([
        [400, 2],
        [200, 1],
        [200, 1],
      ]);
    } finally {
      asr.openaiWordTimes = true;
    }
  });

  it('ASR_WORD_TIMESTAMPS=false asks for segments only', async () => {
    await call(client({ ASR_BACKEND: 'openai', ASR_WORD_TIMESTAMPS: 'false' }));
    expect(asr.syncRequests[0]!.fields.filter(([n]) => n === 'timestamp_granularities[]')).toEqual([['timestamp_granularities[]', 'segment']]);
    expect(await call(client({ ASR_BACKEND: 'whisper-asr', ASR_WORD_TIMESTAMPS: 'false' }))).toEqual({ kind: 'segments', segments: heard.map(({ words: _, ...rest }) => rest) });
    expect(asr.syncRequests[1]!.query).toEqual({ encode: 'true', task: 'transcribe', output: 'json' });
  });

  it('whisper-asr-webservice with WhisperX: diarize=true and word_timestamps=true; segments keep SPEAKER_00 and their words', async () => {
    asr.whisperAsrEngine = 'whisperx';
    try {
      expect(await call(client({ ASR_BACKEND: 'whisper-asr', ASR_DIARIZE: 'true' }))).toEqual({ kind: 'segments', segments: speakers(['SPEAKER_00', 'SPEAKER_01']) });
      expect(asr.syncRequests[0]!.query).toEqual({ encode: 'true', task: 'transcribe', output: 'json', word_timestamps: 'true', diarize: 'true' });
    } finally {
      asr.whisperAsrEngine = 'faster_whisper';
    }
  });

  it('reads speakers and words from any answer: numbered speakers, top-level words matched to segments by time', () => {
    const body = {
      segments: [
        { start: 0, end: 2, text: ' Hello there.', speaker: 0 },
        { start: 2, end: 4, text: ' Hi!', speaker: 'SPEAKER_01' },
      ],
      words: [
        { word: 'Hello', start: 0.1, end: 0.6 },
        { word: 'there.', start: 0.7, end: 1.8 },
        { word: 'Hi!', start: 2.2, end: 2.9 },
      ],
    };
    expect(segmentsFromAnswer(body, 4)).toEqual([
      { start: 0, end: 2, text: 'Hello there.', speaker: '0', words: [{ word: 'Hello', start: 0.1, end: 0.6 }, { word: 'there.', start: 0.7, end: 1.8 }] },
      { start: 2, end: 4, text: 'Hi!', speaker: 'SPEAKER_01', words: [{ word: 'Hi!', start: 2.2, end: 2.9 }] },
    ]);
  });

  it('stitching moves words with their chunk and tells apart the speakers of different chunks', () => {
    const part = (speaker: string) => [{ start: 0, end: 1, text: 'a b', speaker, words: [{ word: 'a', start: 0, end: 0.5 }, { word: 'b', start: 0.5, end: 1 }] }];
    expect(stitchChunks([{ start: 0, segments: part('A') }, { start: 10, segments: part('A') }])).toEqual([
      { start: 0, end: 1, text: 'a b', speaker: 'A', words: [{ word: 'a', start: 0, end: 0.5 }, { word: 'b', start: 0.5, end: 1 }] },
      { start: 10, end: 11, text: 'a b', speaker: 'A (part 2)', words: [{ word: 'a', start: 10, end: 10.5 }, { word: 'b', start: 10.5, end: 11 }] },
    ]);
  });
});

describe("whisper.cpp's server", () => {
  it('gets /inference with file, verbose_json and temperature, no model; its 200 error is a permanent failure', async () => {
    const b = client({ ASR_BACKEND: 'whisper-cpp', ASR_MODEL: 'ggml-large-v3-turbo' });
    expect(await call(b)).toEqual({ kind: 'segments', segments: heard });
    expect(asr.syncRequests[0]).toMatchObject({ protocol: 'whisper-cpp', path: '/inference', fileField: 'file', status: 200 });
    expect(asr.syncRequests[0]!.fields).toEqual([
      ['response_format', 'verbose_json'],
      ['temperature', '0'],
    ]);
    asr.syncScript.push({ status: 200, body: { error: 'failed to read audio data' } });
    await expect(call(b)).rejects.toThrow(new PermanentError('The transcription backend failed: failed to read audio data'));
  });
});

describe('whisper-asr-webservice', () => {
  it('gets /asr?encode=true&task=transcribe&output=json with audio_file, and its text/plain JSON is read', async () => {
    const b = client({ ASR_BACKEND: 'whisper-asr', ASR_LANGUAGE: 'en' });
    expect(await call(b)).toEqual({ kind: 'segments', segments: heard });
    expect(asr.syncRequests[0]).toMatchObject({
      protocol: 'whisper-asr',
      path: '/asr',
      query: { encode: 'true', task: 'transcribe', output: 'json', language: 'en' },
      fileField: 'audio_file',
      fields: [],
      status: 200,
    });
    asr.syncScript.push({ status: 422, body: { detail: [{ type: 'enum', loc: ['query', 'language'], msg: "Input should be 'af', 'am', ...", input: 'xx' }] } });
    await expect(call(b)).rejects.toThrow(/^The transcription backend answered 422: \[\{"type":"enum","loc":\["query","language"\]/);
  });
});
