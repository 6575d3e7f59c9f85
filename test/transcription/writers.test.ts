import { describe, expect, it } from 'vitest';
import { chooseMode, parseAnalysis } from '../../transcription/transcripts/audio.js';
import { buildCues } from '../../transcription/transcripts/cues.js';
import { escapeMarkdown, fileStem, paragraphs, renderTranscript, shortTime, srtTime, toSrt, toTxt } from '../../transcription/transcripts/writers.js';

const segments = [
  { start: 0, end: 1.5, text: 'Hello and welcome.' },
  { start: 1.5, end: 3.25, text: 'Today: *durable* pipelines.' },
  { start: 6, end: 6, text: 'After a pause.' },
  { start: 3725.5, end: 3727.125, text: 'An hour later.' },
];
const meta = { title: 'My Talk #1', transcriptSource: 'asr', sourceUrl: 'https://example.com/v?id=1', createdAt: new Date('2026-01-02T03:04:05Z') };

describe('transcript writers', () => {
  it('formats clock times', () => {
    expect(srtTime(0)).toBe('00:00:00,000');
    expect(srtTime(3725.5)).toBe('01:02:05,500');
    expect(srtTime(1.0005)).toBe('00:00:01,001');
    expect(shortTime(65)).toBe('01:05');
    expect(shortTime(3725)).toBe('1:02:05');
  });

  it('writes SRT: numbered cues cut to the subtitle rules, comma milliseconds, a visible duration for instant segments', () => {
    expect(toSrt(buildCues(segments))).toBe(
      [
        '1\n00:00:00,000 --> 00:00:03,250\nHello and welcome.\nToday: *durable* pipelines.\n',
        '2\n00:00:06,000 --> 00:00:07,000\nAfter a pause.\n',
        '3\n01:02:05,500 --> 01:02:07,125\nAn hour later.\n',
      ].join('\n'),
    );
    expect(toSrt([])).toBe('');
  });

  it('writes TXT as paragraphs split at pauses of two seconds or more', () => {
    expect(paragraphs(segments).map((p) => p.start)).toEqual([0, 6, 3725.5]);
    expect(toTxt(segments)).toBe('Hello and welcome. Today: *durable* pipelines.\n\nAfter a pause.\n\nAn hour later.\n');
    expect(toTxt([])).toBe('');
  });

  it('writes Markdown with a title, the facts, and timestamped paragraphs, escaping Markdown syntax', () => {
    const md = renderTranscript(segments, meta).md;
    expect(md).toBe(
      [
        '# My Talk \\#1',
        '',
        '- Source: <https://example.com/v?id=1>',
        '- Transcript: speech recognition',
        '- Duration: 1:02:07',
        '- Created: 2026-01-02T03:04:05.000Z',
        '',
        '**[00:00]** Hello and welcome. Today: \\*durable\\* pipelines.',
        '',
        '**[00:06]** After a pause.',
        '',
        '**[1:02:05]** An hour later.',
        '',
      ].join('\n'),
    );
    expect(escapeMarkdown('a_b [c](d) <e>')).toBe('a\\_b \\[c\\](d) \\<e\\>');
  });

  it('writes JSON with numbered segments and the transcript source', () => {
    const json = JSON.parse(renderTranscript(segments, { ...meta, transcriptSource: 'captions' }).json);
    expect(json).toEqual({
      title: 'My Talk #1',
      source: 'https://example.com/v?id=1',
      transcript_source: 'captions',
      createdAt: '2026-01-02T03:04:05.000Z',
      duration: 3727.125,
      segments: segments.map((s, i) => ({ id: i + 1, ...s })),
    });
  });

  it('makes safe file names from titles', () => {
    expect(fileStem('My Talk #1: Ünïcode / ../etc')).toBe('My-Talk-1-Unicode-etc');
    expect(fileStem('日本語')).toBe('transcript');
    expect(fileStem('x'.repeat(200))).toHaveLength(80);
  });
});

describe('auto audio mode', () => {
  const m = (noiseFloorDb: number, speechLevelDb: number, meanVolumeDb = -18, maxVolumeDb = -3) => ({
    noiseFloorDb,
    speechLevelDb,
    meanVolumeDb,
    maxVolumeDb,
    windows: 100,
  });

  it('chooses from the noise floor, the speech level and the volume', () => {
    expect(chooseMode(m(-120, -120, -91, -91)).mode).toBe('none'); // silence
    expect(chooseMode(m(-31, -13)).mode).toBe('aggressive'); // loud steady noise
    expect(chooseMode(m(-45, -8)).mode).toBe('standard'); // noise, but speech far above it
    expect(chooseMode(m(-59, -9)).mode).toBe('standard'); // audible hiss
    expect(chooseMode(m(-85, -37, -42)).mode).toBe('standard'); // clean but quiet
    expect(chooseMode(m(-80, -9, -15, -0.1)).mode).toBe('standard'); // clipping
    expect(chooseMode(m(-75, -9)).mode).toBe('none'); // clean
    expect(chooseMode(m(-31, -13)).reason).toContain('noise floor -31.0 dBFS');
  });

  it('reads window levels and volumedetect from ffmpeg output', () => {
    const stderr = [
      ...Array.from({ length: 17 }, (_, i) => `[Parsed_ametadata_3 @ 0x1] lavfi.astats.Overall.RMS_level=${-10 - i}`),
      "[Parsed_ametadata_3 @ 0x1] lavfi.astats.Overall.RMS_level=-inf",
      '[Parsed_ametadata_3 @ 0x1] lavfi.astats.Overall.RMS_level=-inf',
      '[Parsed_ametadata_3 @ 0x1] lavfi.astats.Overall.RMS_level=-inf',
      '[Parsed_volumedetect_4 @ 0x2] mean_volume: -14.5 dB',
      '[Parsed_volumedetect_4 @ 0x2] max_volume: -6.0 dB',
    ].join('\n');
    expect(parseAnalysis(stderr)).toEqual({ meanVolumeDb: -14.5, maxVolumeDb: -6, noiseFloorDb: -120, speechLevelDb: -10, windows: 20 });
    expect(() => parseAnalysis('Output file #0 does not contain any stream')).toThrow(/no volume statistics/);
  });
});
