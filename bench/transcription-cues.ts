import { renderTranscript } from '../transcription/transcripts/writers.js';
import type { Segment } from '../transcription/transcripts/segments.js';

const VOCABULARY = 'so the quick brown fox jumps over a lazy dog, and then it rests. Why? Because durable pipelines matter; they do.'.split(' ');

/** An hour of two speakers at 14 characters a second, 25 words a segment, with or without word times. */
export function hourOfSpeech(withWords: boolean, seconds = 3600): Segment[] {
  const out: Segment[] = [];
  let t = 0;
  let k = 0;
  while (t < seconds) {
    const start = t;
    const words = Array.from({ length: 25 }, () => {
      const word = VOCABULARY[k++ % VOCABULARY.length]!;
      const at = t;
      t += (word.length + 1) / 14;
      return { word, start: at, end: t - 0.02 };
    });
    out.push({ start, end: t, text: words.map((w) => w.word).join(' '), speaker: out.length % 3 ? 'SPEAKER_00' : 'SPEAKER_01', ...(withWords && { words }) });
    t += 0.5;
  }
  return out;
}

/**
 * What cutting subtitle cues adds to finishing a job (transcription/transcripts/cues.ts): all five files of an
 * hour of speech written three times, with and without word times; the median, per minute of audio.
 */
export function cueBuildingCost(): void {
  const meta = { title: 'bench', transcriptSource: 'asr', createdAt: new Date() };
  for (const withWords of [true, false]) {
    const segments = hourOfSpeech(withWords);
    const times: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      renderTranscript(segments, meta);
      times.push(performance.now() - t0);
    }
    const median = [...times].sort((a, b) => a - b)[1]!;
    console.log(
      `files of 60 min of speech (${segments.length} segments, ${withWords ? 'word times' : 'no word times: split in proportion'}): ` +
        `median ${median.toFixed(0)} ms, ${(median / 60).toFixed(1)} ms per minute of audio (runs ${times.map((x) => x.toFixed(0)).join(', ')} ms)`,
    );
  }
}
