import { answerJson } from '../../llm/chat.js';
import type { NumberedSegment } from '../transcripts/segments.js';
import { escapeMarkdown, shortTime } from '../transcripts/writers.js';
import { languageName } from '../../core/languages.js';

/**
 * A summary with timestamped chapters. The transcript goes to the model in parts of whole segments, each line with
 * its time (`[12:34] text`); each part's answer is a summary of the part and its chapters, each starting at a line's
 * time. With more than one part, the parts' summaries are then summarised into one. A chapter's start is moved to
 * the start of the part's segment it falls in, so every chapter starts where something is said.
 * Pure: the activities (transcription/derived/activities.ts) call it.
 */

export interface Chapter {
  start: number;
  end: number;
  title: string;
  summary: string;
}

export interface PartSummary {
  summary: string;
  chapters: { start: number; title: string; summary: string }[];
}

export interface Summary {
  summary: string;
  chapters: Chapter[];
}

/** The marker the language-model fake (fakes/llm-transcripts.ts) recognises a summary request by. */
export const SUMMARY_TASK = 'You summarise a part of a timed transcript';
export const COMBINE_TASK = 'You combine the summaries of the parts of one recording';

export const PART_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['summary', 'chapters'],
  properties: {
    summary: { type: 'string' },
    chapters: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['start', 'title', 'summary'],
        properties: { start: { type: 'string' }, title: { type: 'string' }, summary: { type: 'string' } },
      },
    },
  },
} as const;

export const COMBINED_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['summary'],
  properties: { summary: { type: 'string' } },
} as const;

const writeIn = (language: string | undefined) =>
  language ? `Write in ${languageName(language)}.` : 'Write in the language of the transcript.';

/** The request for one part: its segments, each line with its time. */
export function partAsk(segments: readonly NumberedSegment[], part: { index: number; count: number }, language: string | undefined) {
  const system = [
    `${SUMMARY_TASK} (part ${part.index + 1} of ${part.count}).`,
    'Answer with JSON only: {"summary": "...", "chapters": [{"start": "mm:ss", "title": "...", "summary": "..."}]}.',
    'The summary: a few sentences on what this part says. Chapters: where the topic changes, in order, each starting at the time of the line it starts with (as written in the brackets), with a short title and one sentence.',
    writeIn(language),
  ].join(' ');
  const user = segments.map((s) => `[${shortTime(s.start)}] ${s.speaker ? `${s.speaker}: ` : ''}${s.text}`).join('\n');
  return { system, user, schema: PART_SCHEMA as unknown as Record<string, unknown>, schemaName: 'summary_part' };
}

/** The request that makes one summary of the parts'. */
export function combineAsk(parts: readonly string[], language: string | undefined) {
  const system = [`${COMBINE_TASK} into one summary of a few sentences.`, 'Answer with JSON only: {"summary": "..."}.', writeIn(language)].join(' ');
  return { system, user: parts.map((p, i) => `Part ${i + 1}: ${p}`).join('\n\n'), schema: COMBINED_SCHEMA as unknown as Record<string, unknown>, schemaName: 'summary' };
}

/** `mm:ss`, `h:mm:ss`, or seconds as a number. */
export function readTime(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return undefined;
  const m = /^\[?(?:(\d+):)?(\d{1,2}):(\d{2})(?:\.\d+)?\]?$/.exec(value.trim());
  if (m) return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** Why an answer cannot be used; the part is asked again, then the summary fails. */
export class SummaryMismatch extends Error {
  constructor(message: string) {
    super(`SUMMARY_UNUSABLE: ${message}`);
    this.name = 'SummaryMismatch';
  }
}

/** A part's summary and chapters, each chapter at the start of the part's segment its time falls in. */
export function readPart(content: string, segments: readonly NumberedSegment[]): PartSummary {
  const json = answerJson(content) as { summary?: unknown; chapters?: unknown };
  const summary = typeof json?.summary === 'string' ? json.summary.trim() : '';
  if (!summary) throw new SummaryMismatch('the answer has no summary');
  const raw = Array.isArray(json.chapters) ? (json.chapters as Record<string, unknown>[]) : [];
  const first = segments[0]?.start ?? 0;
  const last = segments[segments.length - 1]?.end ?? 0;
  const chapters = new Map<number, PartSummary['chapters'][number]>();
  for (const c of raw) {
    const at = readTime(c?.start);
    const title = typeof c?.title === 'string' ? c.title.trim() : '';
    if (at === undefined || !title) continue;
    // Times outside the part are the model's mistakes: the part's bounds hold them.
    const t = Math.min(Math.max(at, first), last);
    const seg = [...segments].reverse().find((s) => s.start <= t + 0.5) ?? segments[0]!;
    if (!chapters.has(seg.start)) chapters.set(seg.start, { start: seg.start, title, summary: typeof c.summary === 'string' ? c.summary.trim() : '' });
  }
  // A part always opens a chapter: one the model gave none for is the part itself.
  if (!chapters.has(first)) chapters.set(first, { start: first, title: chapters.size ? 'Beginning' : summary.split(/(?<=[.!?])\s/)[0]!.slice(0, 80), summary: chapters.size ? '' : summary });
  return { summary, chapters: [...chapters.values()].sort((a, b) => a.start - b.start) };
}

export function readCombined(content: string): string {
  const json = answerJson(content) as { summary?: unknown };
  if (typeof json?.summary !== 'string' || !json.summary.trim()) throw new SummaryMismatch('the answer has no summary');
  return json.summary.trim();
}

/** The chapters of every part, each ending where the next starts (the last at the end of the transcript). */
export function assembleSummary(summary: string, parts: readonly PartSummary[], end: number): Summary {
  const starts = parts.flatMap((p) => p.chapters).sort((a, b) => a.start - b.start);
  const chapters = starts.map((c, i) => ({ ...c, end: i + 1 < starts.length ? starts[i + 1]!.start : Math.max(end, c.start) }));
  return { summary, chapters };
}

/** summary.md and summary.json. */
export function renderSummary(s: Summary, meta: { title: string; language: string | null; createdAt: Date }): { md: string; json: string } {
  const md = [
    `# ${escapeMarkdown(meta.title)}: summary`,
    '',
    escapeMarkdown(s.summary),
    '',
    '## Chapters',
    '',
    ...s.chapters.map((c) => `- **[${shortTime(c.start)}] ${escapeMarkdown(c.title)}**${c.summary ? `: ${escapeMarkdown(c.summary)}` : ''}`),
    '',
  ].join('\n');
  const json = JSON.stringify({ title: meta.title, language: meta.language, createdAt: meta.createdAt.toISOString(), ...s }, null, 2) + '\n';
  return { md, json };
}
