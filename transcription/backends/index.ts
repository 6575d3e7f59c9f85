import type { AsrBackendKind, TranscriptionConfig } from '../../core/config.js';
import { PermanentError } from '../../core/errors.js';
import type { Segment } from '../transcripts/segments.js';
import type { SyncBackendKind } from '../contract.js';
import { openaiBackend } from './openai.js';
import { whisperAsrBackend } from './whisper-asr.js';

/**
 * The transcription backends (ASR_BACKEND; docs/transcription.md, "The transcription backend"). Two families:
 *
 * - `callback`: Gristmill's own contract (transcription/asr-client.ts): the audio is submitted, the backend calls
 *   the webhook when it is done, and 503 means "wait for the model on /model/events".
 * - synchronous: the answer to each request is the transcript. `openai` (OpenAI-compatible
 *   `/v1/audio/transcriptions`: OpenAI, Groq, Speaches, LocalAI), `whisper-cpp` (whisper.cpp's server, `/inference`)
 *   and `whisper-asr` (whisper-asr-webservice, `/asr`). Each is a small client behind `SyncBackend`; the workflow
 *   sends the audio a chunk at a time (transcription/chunks.ts) and stitches the segments.
 */
export type { SyncBackendKind } from '../contract.js';

/** One audio file (a chunk): where it is, the name it is sent under (its extension tells servers the format), its length. */
export interface AudioFile {
  path: string;
  name: string;
  seconds: number;
}

/**
 * `segments`: the transcript of the file, times in seconds from its start. `busy`: the server answered 503 (its
 * model is loading, or it is overloaded): send the same file again after `retryAfterMs`.
 */
export type TranscribeOutcome = { kind: 'segments'; segments: Segment[] } | { kind: 'busy'; retryAfterMs: number };

export interface CallOptions {
  signal: AbortSignal;
  /** The longest a request may take (TRANSCRIPTION_MEDIA_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface SyncBackend {
  kind: SyncBackendKind;
  /** Sends one file and reads its transcript. Throws PermanentError or RecoverableError (core/errors.ts). */
  transcribe(audio: AudioFile, o: CallOptions): Promise<TranscribeOutcome>;
}

/** The endpoint every synchronous client is built from. */
export interface SyncEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string | undefined;
  language: string | undefined;
}

/** The configured synchronous backend; a clear failure when the configuration has none. */
export function syncBackend(t: TranscriptionConfig): SyncBackend {
  if (!t.asrBaseUrl) throw new PermanentError('No transcription backend is configured (ASR_BASE_URL is not set), and this job needs one');
  const e: SyncEndpoint = { baseUrl: t.asrBaseUrl, apiKey: t.asrApiKey, model: t.asrModel, language: t.asrLanguage };
  switch (t.asrBackend) {
    case 'openai':
    case 'whisper-cpp':
      return openaiBackend(e, t.asrBackend);
    case 'whisper-asr':
      return whisperAsrBackend(e);
    default:
      throw new PermanentError(`ASR_BACKEND=${t.asrBackend} is not a synchronous backend`);
  }
}

/** What the job records as having produced its transcript: the backend kind and the model (when known). */
export function backendIdentity(t: Pick<TranscriptionConfig, 'asrBackend' | 'asrModel'>): { backend: AsrBackendKind; model: string | null } {
  return { backend: t.asrBackend, model: t.asrModel ?? null };
}

/** `openai (whisper-1)`, or the kind alone when the model is not known: for stage details and messages. */
export function backendLabel(t: Pick<TranscriptionConfig, 'asrBackend' | 'asrModel'>): string {
  return t.asrModel ? `${t.asrBackend} (${t.asrModel})` : t.asrBackend;
}
