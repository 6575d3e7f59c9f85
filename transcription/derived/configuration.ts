import type { ConfigSection, SectionRows } from '../../core/config.js';
import { bool, int } from '../../core/settings.js';

/** Translations and summaries of transcripts (docs/transcription.md, "Translations and summaries"). */
export interface TranscriptExtrasConfig {
  /** Subtitle lines per request to the model. */
  translationChunkLines: number;
  /** Lines before and after a chunk sent as context, not to be translated. */
  translationContextLines: number;
  /** Segments per part of a summary (each part one request). */
  summaryChunkSegments: number;
  /** Requests per chunk before the translation or summary fails (an answer that drops lines, in the wrong language, a 5xx). */
  attempts: number;
  /** Longest request to the model. */
  requestTimeoutMs: number;
  /** Every job that finishes gets a summary. */
  summaryForEveryJob: boolean;
}

declare module '../../core/config.js' {
  interface ServiceConfigs {
    /** Transcription's translations and summaries (transcription/derived/). */
    transcriptExtras: TranscriptExtrasConfig;
  }
}

const ROWS: SectionRows<TranscriptExtrasConfig> = {
  translationChunkLines: {
    variable: 'TRANSLATION_CHUNK_LINES', section: 'transcript-extras', parse: int(1, 500), default: '40',
    meaning: 'subtitle lines sent to the language model in one request (numbered; the answer maps back by number)',
  },
  translationContextLines: {
    variable: 'TRANSLATION_CONTEXT_LINES', section: 'transcript-extras', parse: int(0, 50), default: '3',
    meaning: 'lines before and after a chunk sent with it as context (not translated), so a sentence cut across chunks reads as one',
  },
  summaryChunkSegments: {
    variable: 'SUMMARY_CHUNK_SEGMENTS', section: 'transcript-extras', parse: int(10, 5000), default: '300',
    meaning: 'segments of the transcript in one request for a summary; a longer transcript is summarised in parts, then the parts together',
  },
  attempts: {
    variable: 'TRANSCRIPT_LLM_ATTEMPTS', section: 'transcript-extras', parse: int(1, 20), default: '3',
    meaning: 'requests for one chunk before the translation or summary fails: an answer that drops or merges lines or is in the wrong language is asked again, as are network errors, 429 and 5xx',
  },
  requestTimeoutMs: {
    variable: 'TRANSCRIPT_LLM_TIMEOUT_MS', section: 'transcript-extras', parse: int(1000, 3_600_000), default: '180000',
    meaning: 'longest request to the language model for a translation chunk or a summary part',
  },
  summaryForEveryJob: {
    variable: 'TRANSCRIPTION_SUMMARY', section: 'transcript-extras', parse: bool(), default: 'false',
    meaning: '`true`: every transcription job that finishes gets a summary with chapters (as `POST /api/jobs/:id/summary` makes one)',
  },
};

export const transcriptExtrasConfiguration: ConfigSection = {
  sections: {
    'transcript-extras': {
      title: 'Translations and summaries',
      about: 'Transcripts translated and summarised by the language model (transcription/derived/; the model is under [Language model](#language-model)).',
    },
  },
  table: { transcriptExtras: ROWS },
};
