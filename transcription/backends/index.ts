import type { AsrBackendKind, TranscriptionConfig } from '../configuration.js';
import { PermanentError } from '../../core/errors.js';
import { openaiBackend } from './openai.js';
import type { SyncBackend, SyncEndpoint } from './types.js';
import { whisperAsrBackend } from './whisper-asr.js';

/**
 * The transcription backends (ASR_BACKEND; docs/transcription.md, "The transcription backend"). Two families:
 *
 * - `callback`: Gristmill's own contract (transcription/asr-client.ts): the audio is submitted, the backend calls
 *   the webhook when it is done, and 503 means "wait for the model on /model/events".
 * - synchronous: the answer to each request is the transcript. `openai` (OpenAI-compatible
 *   `/v1/audio/transcriptions`: OpenAI, Groq, Speaches, LocalAI), `whisper-cpp` (whisper.cpp's server, `/inference`)
 *   and `whisper-asr` (whisper-asr-webservice, `/asr`). Each is a small client behind `SyncBackend`; the workflow
 *   sends the audio a chunk at a time (transcription/chunks.ts) and stitches the segments. What a client
 *   implements is in types.ts.
 */

/** The configured synchronous backend; a clear failure when the configuration has none. */
export function syncBackend(t: TranscriptionConfig): SyncBackend {
  if (!t.asrBaseUrl) throw new PermanentError('No transcription backend is configured (ASR_BASE_URL is not set), and this job needs one');
  const e: SyncEndpoint = {
    baseUrl: t.asrBaseUrl,
    apiKey: t.asrApiKey,
    model: t.asrModel,
    language: t.asrLanguage,
    diarize: t.asrDiarize,
    words: t.asrWordTimestamps,
  };
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
