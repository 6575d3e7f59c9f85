import { NotFoundError, ValidationError } from '../../core/errors.js';
import { cleanText, MAX_SPEAKER_LENGTH, type NumberedSegment } from './segments.js';

/**
 * Changes people make to a finished transcript (PATCH /api/jobs/:id/speakers and /segments/:segmentId). Pure: each
 * takes the stored segments and answers the new ones, or throws the request's error.
 */

/** The longest corrected text of one segment: a segment is a sentence or a few, never a chapter. */
export const MAX_SEGMENT_TEXT = 5000;

/** The speaker labels of a transcript, in order of first appearance. */
export function speakersOf(segments: readonly NumberedSegment[]): string[] {
  return [...new Set(segments.flatMap((s) => (s.speaker ? [s.speaker] : [])))];
}

/**
 * Names speakers: every segment of a speaker named in `names` (`{"SPEAKER_00": "Ana"}`) takes the name. Two labels
 * may get one name (a speaker the backend split in two). Every key must be a speaker of the transcript: a map that
 * names one that is not there is 400 UNKNOWN_SPEAKER, and nothing changes.
 */
export function renameSpeakers(segments: readonly NumberedSegment[], names: Record<string, string>): NumberedSegment[] {
  const present = new Set(speakersOf(segments));
  const unknown = Object.keys(names).filter((label) => !present.has(label));
  if (unknown.length) {
    const have = present.size ? `its speakers are ${[...present].map((s) => JSON.stringify(s)).join(', ')}` : 'it has no speakers';
    throw new ValidationError(
      `The transcript has no speaker ${unknown.map((s) => JSON.stringify(s)).join(', ')} (${have})`,
      'UNKNOWN_SPEAKER',
      unknown.map((label) => ({ pointer: `/body/${label.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: 'is not a speaker of this transcript' })),
    );
  }
  // A Map: a speaker may be called `constructor` or `toString`.
  const cleaned = new Map(
    Object.entries(names).map(([label, name]) => {
      const clean = cleanText(name).slice(0, MAX_SPEAKER_LENGTH);
      if (!clean) throw new ValidationError(`The name for ${JSON.stringify(label)} is empty`, 'VALIDATION_ERROR', [{ pointer: `/body/${label}`, message: 'must not be empty' }]);
      return [label, clean];
    }),
  );
  return segments.map((s) => (s.speaker && cleaned.has(s.speaker) ? { ...s, speaker: cleaned.get(s.speaker)! } : s));
}

/**
 * Corrects one segment's text: its timing and speaker stay, the text the backend gave is kept as `edit.originalText`
 * (from the first correction on) with the time of the latest one. Its word times no longer match the text, so they
 * go (its subtitle cues are then cut from its time in proportion). Unknown segment: 404 SEGMENT_NOT_FOUND.
 */
export function correctSegment(segments: readonly NumberedSegment[], segmentId: number, text: string, now = new Date()): NumberedSegment[] {
  const at = segments.findIndex((s) => s.id === segmentId);
  if (at === -1) throw new NotFoundError(`The transcript has no segment ${segmentId}`, 'SEGMENT_NOT_FOUND');
  const clean = cleanText(text);
  if (!clean) throw new ValidationError('The text is empty', 'VALIDATION_ERROR', [{ pointer: '/body/text', message: 'must not be empty' }]);
  const old = segments[at]!;
  const { words: _words, ...kept } = old;
  const edited: NumberedSegment = { ...kept, text: clean, edit: { originalText: old.edit?.originalText ?? old.text, editedAt: now.toISOString() } };
  return segments.map((s, i) => (i === at ? edited : s));
}
