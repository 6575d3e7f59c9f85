import { numbered, round3, type Segment } from './segments.js';

/** The four result files of a transcript. Pure: each writer turns segments into the file's text. */
export const TRANSCRIPT_FORMATS = ['srt', 'txt', 'md', 'json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export const FORMAT_CONTENT_TYPES: Record<TranscriptFormat, string> = {
  srt: 'application/x-subrip; charset=utf-8',
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
}

/** A pause at least this long between segments starts a new paragraph in TXT and MD. */
export const PARAGRAPH_GAP_SECONDS = 2;
/** A segment that has no duration is shown for this long in SRT, so players display it. */
const MIN_SRT_SECONDS = 1;

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

export function toSrt(segments: readonly Segment[]): string {
  return segments
    .map((seg, i) => {
      const end = seg.end > seg.start ? seg.end : seg.start + MIN_SRT_SECONDS;
      return `${i + 1}\n${srtTime(seg.start)} --> ${srtTime(end)}\n${seg.text}\n`;
    })
    .join('\n');
}

/** Segments grouped into paragraphs at pauses. */
export function paragraphs(segments: readonly Segment[]): { start: number; text: string }[] {
  const out: { start: number; texts: string[] }[] = [];
  let prevEnd: number | undefined;
  for (const seg of segments) {
    const current = out.at(-1);
    if (!current || (prevEnd !== undefined && seg.start - prevEnd >= PARAGRAPH_GAP_SECONDS)) {
      out.push({ start: seg.start, texts: [seg.text] });
    } else {
      current.texts.push(seg.text);
    }
    prevEnd = seg.end;
  }
  return out.map((p) => ({ start: p.start, text: p.texts.join(' ') }));
}

export function toTxt(segments: readonly Segment[]): string {
  const text = paragraphs(segments)
    .map((p) => p.text)
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
  for (const p of paragraphs(segments)) lines.push(`**[${shortTime(p.start)}]** ${escapeMarkdown(p.text)}`, '');
  return lines.join('\n');
}

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
        segments: numbered(segments),
      },
      null,
      2,
    ) + '\n'
  );
}

/** Every result file's text, by format. */
export function renderTranscript(segments: readonly Segment[], meta: TranscriptMeta): Record<TranscriptFormat, string> {
  return {
    srt: toSrt(segments),
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
