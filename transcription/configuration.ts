import { ConfigError } from '../core/errors.js';
import type { ConfigSection, SectionRows } from '../core/config.js';
import { baseUrl, bool, int, oneOf, parser, refine, size, text } from '../core/settings.js';
import type { SubtitleRules } from './transcripts/cues.js';

/**
 * The kinds of transcription backend (docs/transcription.md, "The transcription backend"): `callback` speaks Gristmill's own
 * submit-and-webhook contract; the others answer each request with the transcript (transcription/backends/).
 */
export const ASR_BACKENDS = ['callback', 'openai', 'whisper-cpp', 'whisper-asr'] as const;
export type AsrBackendKind = (typeof ASR_BACKENDS)[number];

export interface TranscriptionConfig {
  /** Which protocol the backend speaks (ASR_BACKEND). */
  asrBackend: AsrBackendKind;
  /** The transcription backend; unset: jobs that need it fail with a message saying so (captions still work). */
  asrBaseUrl: string | undefined;
  asrApiKey: string | undefined;
  /** The model asked for (OpenAI-compatible servers), or the one the server runs, for the job's record. */
  asrModel: string | undefined;
  /** The spoken language (ISO 639-1) sent to synchronous backends; unset: the model detects it. */
  asrLanguage: string | undefined;
  /** Ask the backend for speakers (OpenAI `diarized_json`, whisper-asr-webservice `diarize=true`). */
  asrDiarize: boolean;
  /** Ask synchronous backends for word times (OpenAI `timestamp_granularities[]=word`, whisper-asr `word_timestamps`). */
  asrWordTimestamps: boolean;
  /** How subtitle cues (SRT, VTT) are cut (transcription/transcripts/cues.ts; `subtitleRules` gathers them). */
  subtitleMaxLineChars: number;
  subtitleMaxLines: number;
  subtitleMaxCueMs: number;
  subtitleMinCueMs: number;
  subtitleMaxCharsPerSecond: number;
  /** The longest media a job takes, in seconds (ffprobe before conversion, yt-dlp's filter before a download). */
  maxDurationSeconds: number;
  /** The most a job's work folder (download, converted audio, chunks) may hold. */
  workMaxBytes: number;
  /** The most jobs one playlist or channel URL becomes (its first entries). */
  playlistMaxEntries: number;
  /** Synchronous backends: the largest audio file sent in one request; longer audio is split at silences. */
  asrChunkMaxBytes: number;
  /** Largest webhook body (segment lists of long recordings are large). */
  asrWebhookBodyLimitBytes: number;
  uploadMaxBytes: number;
  /** Longest single wait for the backend's model after a 503; Retry-After is capped to it. */
  modelWaitMaxMs: number;
  /** Resubmissions after 503 answers before the job fails. */
  maxResubmits: number;
  /** How long a job waits for the backend's webhook after submission. */
  webhookTimeoutMs: number;
  /** How long the webhook handler waits for the outcome before it answers 200 (the result is kept durably). */
  webhookResponseMs: number;
  /** Heartbeat timeout of long activities: how soon a dead worker's download or wait is retried elsewhere. */
  heartbeatTimeoutMs: number;
  /** Longest download or ffmpeg run. */
  mediaTimeoutMs: number;
  ffmpegPath: string | undefined;
  ytdlpPath: string | undefined;
  /** ffmpeg runs at once per worker process; more wait (heartbeating) so CPU-bound work never starves the rest. */
  ffmpegConcurrency: number;
}

declare module '../core/config.js' {
  interface ServiceConfigs {
    /** Transcription: the backend, upload and webhook limits, waits, and the media tools. */
    transcription: TranscriptionConfig;
  }
}

const language = parser('a language code: `en`, `de`, ...', (raw, name) => {
  const code = raw.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(code)) throw new ConfigError(`${name} must be a language code such as en or de, got "${code}"`);
  return code;
});

const atLeast64kb = refine(
  size(),
  (bytes, name) => {
    if (bytes < 64 * 1024) throw new ConfigError(`${name} must be at least 64kb (2 seconds of audio)`);
    return bytes;
  },
  'a size, at least `64kb`',
);

const ROWS: SectionRows<TranscriptionConfig> = {
  asrBackend: {
    variable: 'ASR_BACKEND', section: 'transcription', parse: oneOf(ASR_BACKENDS, { anyCase: true }), default: 'callback',
    meaning: 'the protocol of the transcription backend (see docs/transcription.md, "The transcription backend")',
  },
  asrBaseUrl: {
    variable: 'ASR_BASE_URL', section: 'transcription', parse: baseUrl,
    meaning: 'the transcription backend; unset: jobs that need it fail saying so (caption jobs still work)',
  },
  asrApiKey: { variable: 'ASR_API_KEY', section: 'transcription', parse: text(), secret: true, meaning: 'sent to the backend as `Authorization: Bearer <key>`' },
  asrModel: {
    variable: 'ASR_MODEL', section: 'transcription', parse: text(),
    default: { text: '`whisper-1` for `openai`, else none', value: (c) => (c.transcription.asrBackend === 'openai' ? 'whisper-1' : undefined) },
    meaning: "the model asked for (`openai`); for the others, the name the job records for the server's model",
  },
  asrLanguage: {
    variable: 'ASR_LANGUAGE', section: 'transcription', parse: language,
    meaning: 'the spoken language (ISO 639-1) sent to synchronous backends; unset: the model detects it',
  },
  asrDiarize: {
    variable: 'ASR_DIARIZE', section: 'transcription', parse: bool(), default: 'false',
    meaning:
      'ask the backend who speaks: `openai` sends `response_format=diarized_json` (gpt-4o-transcribe-diarize), `whisper-asr` ' +
      '`diarize=true` (its WhisperX engine); the callback contract sends `speaker` per segment when it has one (docs/transcription.md, "Speakers")',
  },
  asrWordTimestamps: {
    variable: 'ASR_WORD_TIMESTAMPS', section: 'transcription', parse: bool(), default: 'true',
    meaning: 'ask synchronous backends for word times (`timestamp_granularities[]=word`, `word_timestamps=true`); subtitle cues are then cut at words',
  },
  subtitleMaxLineChars: {
    variable: 'SUBTITLE_MAX_LINE_CHARS', section: 'transcription', parse: int(10, 200), default: '42',
    meaning: 'longest line of a subtitle cue (SRT, VTT), in characters',
  },
  subtitleMaxLines: {
    variable: 'SUBTITLE_MAX_LINES', section: 'transcription', parse: int(1, 4), default: '2',
    meaning: 'most lines in a subtitle cue',
  },
  subtitleMaxCueMs: {
    variable: 'SUBTITLE_MAX_CUE_MS', section: 'transcription', parse: int(1000, 60_000), default: '7000',
    meaning: 'longest time a subtitle cue stays on screen',
  },
  subtitleMinCueMs: {
    variable: 'SUBTITLE_MIN_CUE_MS', section: 'transcription', parse: int(0, 10_000), default: '1000',
    meaning: 'shortest time a subtitle cue stays on screen, where the next one leaves room',
  },
  subtitleMaxCharsPerSecond: {
    variable: 'SUBTITLE_MAX_CPS', section: 'transcription', parse: int(5, 60), default: '17',
    meaning: 'fastest reading speed asked of a viewer, in characters per second (a cue stays longer, or is cut shorter, to keep to it)',
  },
  maxDurationSeconds: {
    variable: 'TRANSCRIPTION_MAX_DURATION_SECONDS', section: 'transcription', parse: int(1, 30 * 86_400), default: '21600',
    meaning: 'longest media a job takes (6 h): checked with ffprobe before conversion and by yt-dlp before a download; longer: the job fails with MEDIA_TOO_LONG',
  },
  workMaxBytes: {
    variable: 'TRANSCRIPTION_WORK_MAX_BYTES', section: 'transcription', parse: size(), default: '4gb',
    meaning: "most a job's work folder (download, converted audio, chunks) may hold; more: the job fails with WORK_FOLDER_TOO_LARGE",
  },
  playlistMaxEntries: {
    variable: 'TRANSCRIPTION_PLAYLIST_MAX_ENTRIES', section: 'transcription', parse: int(1, 10_000), default: '50',
    meaning: 'most jobs a playlist or channel URL becomes (POST /api/playlists): its first entries; the rest are reported, not transcribed',
  },
  asrChunkMaxBytes: {
    variable: 'ASR_CHUNK_MAX_BYTES', section: 'transcription', parse: atLeast64kb, default: '24mb',
    meaning: 'synchronous backends: the largest audio sent in one request; longer audio is split at silences',
  },
  asrWebhookBodyLimitBytes: {
    variable: 'ASR_WEBHOOK_BODY_LIMIT', section: 'transcription', parse: size(), default: '50mb',
    meaning: "largest webhook body (the backend's segments), for a job waiting for its result only; any other call: `BODY_LIMIT`",
  },
  uploadMaxBytes: {
    variable: 'UPLOAD_MAX_BYTES', section: 'transcription', parse: size(), default: '2gb',
    meaning: 'largest upload; larger: 413 and nothing kept',
  },
  modelWaitMaxMs: {
    variable: 'TRANSCRIPTION_MODEL_WAIT_MAX_MS', section: 'transcription', parse: int(10, 86_400_000), default: '600000',
    meaning: "longest wait for the backend's model after one 503; caps Retry-After",
  },
  maxResubmits: {
    variable: 'TRANSCRIPTION_MAX_RESUBMITS', section: 'transcription', parse: int(0, 1000), default: '5',
    meaning: 'resubmissions after 503 answers before the job fails',
  },
  webhookTimeoutMs: {
    variable: 'TRANSCRIPTION_WEBHOOK_TIMEOUT_MS', section: 'transcription', parse: int(100, 30 * 86_400_000), default: '21600000',
    meaning: "how long a job waits for the backend's result (6 h)",
  },
  webhookResponseMs: {
    variable: 'TRANSCRIPTION_WEBHOOK_RESPONSE_MS', section: 'transcription', parse: int(10, 600_000), default: '10000',
    meaning: "how long the webhook handler waits for the outcome before answering 200 (the result is kept durably; keep it under the backend's HTTP timeout)",
  },
  heartbeatTimeoutMs: {
    variable: 'TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS', section: 'transcription', parse: int(500, 3_600_000), default: '30000',
    meaning:
      "how long a download, conversion or submission may go without progress (the tool's output or CPU, bytes sent) before it is stopped and " +
      'retried, on another worker if this one died; a model wait heartbeats while it waits',
  },
  mediaTimeoutMs: {
    variable: 'TRANSCRIPTION_MEDIA_TIMEOUT_MS', section: 'transcription', parse: int(1000, 86_400_000), default: '7200000',
    meaning: 'longest download, conversion or upload to the backend',
  },
  ffmpegPath: {
    variable: 'FFMPEG_PATH', section: 'transcription', parse: text('a path'), default: { text: 'found' },
    meaning: 'path of ffmpeg (see docs/development.md, "Where ffmpeg and yt-dlp come from")',
  },
  ytdlpPath: {
    variable: 'YTDLP_PATH', section: 'transcription', parse: text('a path'), default: { text: 'found' },
    meaning: 'path of yt-dlp (see docs/development.md, "Where ffmpeg and yt-dlp come from")',
  },
  ffmpegConcurrency: {
    variable: 'TRANSCRIPTION_FFMPEG_CONCURRENCY', section: 'transcription', parse: int(1, 256),
    default: { text: '`CPU_COUNT`', value: (c) => c.cpuCount },
    meaning: 'ffmpeg conversions at once per worker process; more wait (heartbeating), so CPU-bound work never starves the rest',
  },
};

/** The subtitle rules as the cue builder takes them. */
export function subtitleRules(t: TranscriptionConfig): SubtitleRules {
  return {
    maxLineChars: t.subtitleMaxLineChars,
    maxLines: t.subtitleMaxLines,
    maxCueSeconds: t.subtitleMaxCueMs / 1000,
    minCueSeconds: t.subtitleMinCueMs / 1000,
    maxCharsPerSecond: t.subtitleMaxCharsPerSecond,
  };
}

/** Transcription's settings (docs/configuration.md, "Transcription"), declared once; runtime/services.ts reads them. */
export const transcriptionConfiguration: ConfigSection = {
  sections: {
    transcription: { title: 'Transcription', about: 'The transcription backend, uploads, waits and the media tools (transcription/).' },
  },
  table: { transcription: ROWS },
};
