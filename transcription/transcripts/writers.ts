import { buildCues, DEFAULT_SUBTITLE_RULES, speakerPrefix, type SubtitleCue, type SubtitleRules } from './cues.js';
import { type NumberedSegment, numbered, round3, type Segment } from './segments.js';

/**
 * The result files of a transcript. Pure: each writer turns segments into the file's text. SRT and VTT are
 * subtitle cues cut to the rules (cues.ts); TXT and MD are paragraphs; JSON is the segments as stored.
 */
export const TRANSCRIPT_FORMATS = ['srt', 'vtt', 'txt', 'md', 'json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export const FORMAT_CONTENT_TYPES: Record<TranscriptFormat, string> = {
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

export interface TranscriptMeta {
  title: string;
  /** `captions` or `asr`. */
  transcriptSource: string;
  /** The video-site URL, for URL jobs. */
  sourceUrl?: string | null;
  /** When the transcript was made. */
  createdAt: Date;
  /** How subtitle cues are cut; the defaults when absent. */
  subtitles?: SubtitleRules;
}

/** A pause at least this long between segments starts a new paragraph in TXT and MD. */
export const PARAGRAPH_GAP_SECONDS = 2;
function clock(totalSeconds: number, separator: ',' | '.', withMillis = true): string {
  const ms = Math.max(0, Math.round(totalSeconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const base = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return withMillis ? `${base}${separator}${String(ms % 1000).padStart(3, '0')}` : base;
}

export const srtTime = (s: number): string => clock(s, ',');
/** `mm:ss`, or `h:mm:ss` from an hour on. */
export function shortTime(s: number): string {
  const full = clock(s, '.', false);
  return full.startsWith('00:') ? full.slice(3) : full.replace(/^0/, '');
}

/** SRT: numbered cues, comma milliseconds; the first cue of a speaker's turn starts with `Name: `. */
export function toSrt(cues: readonly SubtitleCue[]): string {
  return cues
    .map((cue, i) => {
      const lines = cue.turnStart ? [`${speakerPrefix(cue.speaker)}${cue.lines[0]}`, ...cue.lines.slice(1)] : cue.lines;
      return `${i + 1}\n${srtTime(cue.start)} --> ${srtTime(cue.end)}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}

export const vttTime = (s: number): string => clock(s, '.');

/** Text as WebVTT cue text: `&`, `<` and `>` escaped. */
const vttEscape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * WebVTT, as `<track>` elements and web players read it: the header, then each cue with its timing and lines;
 * a cue with a speaker is a voice span (`<v Ana>...</v>`), which players may show or style.
 */
export function toVtt(cues: readonly SubtitleCue[]): string {
  const blocks = cues.map((cue, i) => {
    const text = vttEscape(cue.lines.join('\n'));
    // A voice annotation ends at `>` and may not hold a line break; `&` and `<` are escaped like text.
    const voice = cue.speaker && vttEscape(cue.speaker.replace(/\s+/g, ' '));
    return `${i + 1}\n${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${voice ? `<v ${voice}>${text}</v>` : text}\n`;
  });
  return ['WEBVTT\n', ...blocks].join('\n');
}

/** Segments grouped into paragraphs at pauses and at changes of speaker. */
export function paragraphs(segments: readonly Segment[]): { start: number; text: string; speaker?: string }[] {
  const out: { start: number; texts: string[]; speaker?: string }[] = [];
  let prevEnd: number | undefined;
  for (const seg of segments) {
    const current = out.at(-1);
    if (!current || current.speaker !== seg.speaker || (prevEnd !== undefined && seg.start - prevEnd >= PARAGRAPH_GAP_SECONDS)) {
      out.push({ start: seg.start, texts: [seg.text], ...(seg.speaker && { speaker: seg.speaker }) });
    } else {
      current.texts.push(seg.text);
    }
    prevEnd = seg.end;
  }
  return out.map((p) => ({ start: p.start, text: p.texts.join(' '), ...(p.speaker && { speaker: p.speaker }) }));
}

export function toTxt(segments: readonly Segment[]): string {
  const text = paragraphs(segments)
    .map((p) => `${speakerPrefix(p.speaker)}${p.text}`)
    .join('\n\n');
  return text ? `${text}\n` : '';
}

/** Characters that would turn spoken text into Markdown syntax. */
export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_[\]<>#|~])/g, '\\$1');
}

export function toMarkdown(segments: readonly Segment[], meta: TranscriptMeta): string {
  const duration = segments.length ? Math.max(...segments.map((s) => s.end)) : 0;
  const lines = [
    `# ${escapeMarkdown(meta.title)}`,
    '',
    ...(meta.sourceUrl ? [`- Source: <${meta.sourceUrl.replace(/>/g, '%3E')}>`] : []),
    `- Transcript: ${meta.transcriptSource === 'captions' ? 'captions' : 'speech recognition'}`,
    `- Duration: ${shortTime(duration)}`,
    `- Created: ${meta.createdAt.toISOString()}`,
    '',
  ];
  for (const p of paragraphs(segments)) {
    const who = p.speaker ? ` ${escapeMarkdown(p.speaker)}:` : '';
    lines.push(`**[${shortTime(p.start)}]${who}** ${escapeMarkdown(p.text)}`, '');
  }
  return lines.join('\n');
}

/** JSON: the facts and the segments as stored (ids, speakers, words, corrections). */
export function toJson(segments: readonly Segment[], meta: TranscriptMeta): string {
  const duration = segments.length ? Math.max(...segments.map((s) => s.end)) : 0;
  return (
    JSON.stringify(
      {
        title: meta.title,
        source: meta.sourceUrl ?? null,
        transcript_source: meta.transcriptSource,
        createdAt: meta.createdAt.toISOString(),
        duration: round3(duration),
        segments: isNumbered(segments) ? segments : numbered(segments),
      },
      null,
      2,
    ) + '\n'
  );
}

/** Stored segments (numbered, perhaps corrected) are written as they are. */
const isNumbered = (segments: readonly Segment[]): segments is NumberedSegment[] =>
  segments.every((s) => typeof (s as NumberedSegment).id === 'number');

/** Every result file's text, by format. */
export function renderTranscript(segments: readonly Segment[], meta: TranscriptMeta): Record<TranscriptFormat, string> {
  const cues = buildCues(segments, meta.subtitles ?? DEFAULT_SUBTITLE_RULES);
  return {
    srt: toSrt(cues),
    vtt: toVtt(cues),
    txt: toTxt(segments),
    md: toMarkdown(segments, meta),
    json: toJson(segments, meta),
  };
}

/** A file name from a title: letters, digits, dashes; never empty, never a path. */
export function fileStem(title: string, fallback = 'transcript'): string {
  const stem = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return stem || fallback;
}
