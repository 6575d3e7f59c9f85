import { describe, expect, it } from 'vitest';
import { buildCues } from '../../transcription/transcripts/cues.js';
import { toVtt } from '../../transcription/transcripts/writers.js';
import { isBlankCaptions, parseTimestamp, parseVtt } from '../../transcription/transcripts/vtt.js';

describe('parseTimestamp', () => {
  it('reads hours, minutes, seconds and milliseconds, with or without hours', () => {
    expect(parseTimestamp('00:00:01.500')).toBe(1.5);
    expect(parseTimestamp('01:02:03.004')).toBe(3723.004);
    expect(parseTimestamp('02:03.4')).toBe(123.4);
    expect(parseTimestamp('100:00:00.000')).toBe(360000);
    expect(parseTimestamp('00:00:01,250')).toBe(1.25);
  });

  it('refuses what is not a timestamp', () => {
    for (const bad of ['', '1.5', '00:60.000', 'aa:bb.ccc', '00:00:01']) expect(parseTimestamp(bad)).toBeUndefined();
  });
});

describe('parseVtt', () => {
  it('reads cues with identifiers, settings, multi-line payloads, and skips NOTE, STYLE and REGION blocks', () => {
    const vtt = [
      '\uFEFFWEBVTT - a title',
      'Kind: captions',
      'Language: en',
      '',
      'STYLE',
      '::cue { color: yellow }',
      '',
      'REGION',
      'id:fred width:40%',
      '',
      'NOTE this is a comment',
      'spanning lines',
      '',
      'intro',
      '00:00:00.000 --> 00:00:02.000 align:start position:0%',
      'Hello <b>there</b>,',
      'general &amp; friends',
      '',
      '00:02.000 --> 00:04.500',
      '<v Kenobi>It&#39;s over</v>',
      '',
    ].join('\r\n');
    expect(parseVtt(vtt)).toEqual([
      { id: 'intro', start: 0, end: 2, text: 'Hello there, general & friends' },
      { start: 2, end: 4.5, text: "It's over", speaker: 'Kenobi' },
    ]);
  });

  it('strips inline timing tags of auto-captions', () => {
    const vtt = 'WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nwe<00:00:01.400><c> are</c><00:00:01.800><c> live</c>\n';
    expect(parseVtt(vtt)).toEqual([{ start: 1, end: 3, text: 'we are live' }]);
  });

  it('keeps a cue that directly follows the header without a blank line', () => {
    expect(parseVtt('WEBVTT\n00:00:00.000 --> 00:00:01.000\nfirst\n\n00:00:01.000 --> 00:00:02.000\nsecond')).toEqual([
      { start: 0, end: 1, text: 'first' },
      { start: 1, end: 2, text: 'second' },
    ]);
  });

  it('takes the speaker from a voice span, so captions that say who speaks (and our own VTT) keep their speakers', () => {
    const vtt = 'WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\n<v.loud Ana Lima>Hello &amp; welcome</v>\n\n00:00:01.000 --> 00:00:02.000\n<v Ben>Hi</v>\n\n00:00:02.000 --> 00:00:03.000\nNobody\n';
    expect(parseVtt(vtt)).toEqual([
      { start: 0, end: 1, text: 'Hello & welcome', id: '1', speaker: 'Ana Lima' },
      { start: 1, end: 2, text: 'Hi', speaker: 'Ben' },
      { start: 2, end: 3, text: 'Nobody' },
    ]);
    const segments = [{ start: 0, end: 1.5, text: 'A <b> tag & more.', speaker: 'Ana' }];
    expect(parseVtt(toVtt(buildCues(segments)))).toEqual([{ start: 0, end: 1.5, text: 'A <b> tag & more.', id: '1', speaker: 'Ana' }]);
  });

  it('skips malformed blocks instead of failing', () => {
    const vtt = 'WEBVTT\n\nnot a cue\n\n00:00:xx --> 00:00:01.000\nbad time\n\n00:00:01.000 --> 00:00:02.000\ngood\n';
    expect(parseVtt(vtt)).toEqual([{ start: 1, end: 2, text: 'good' }]);
  });

  it('calls empty and whitespace-only captions blank', () => {
    expect(isBlankCaptions('')).toBe(true);
    expect(isBlankCaptions('WEBVTT\n\n')).toBe(true);
    expect(isBlankCaptions('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n   \n\n00:00:01.000 --> 00:00:02.000\n<c> </c>\n')).toBe(true);
    expect(isBlankCaptions('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nword\n')).toBe(false);
  });
});
