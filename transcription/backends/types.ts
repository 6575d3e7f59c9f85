import type { SyncBackendKind } from '../contract.js';
import type { Segment } from '../transcripts/segments.js';

/**
 * What every synchronous backend client (openai.ts, whisper-asr.ts) implements and what its callers see: one
 * module below the clients and the factory (index.ts), so neither imports the other back.
 */

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
  /** Ask for speakers (ASR_DIARIZE), where the protocol has a way to. */
  diarize: boolean;
  /** Ask for word times (ASR_WORD_TIMESTAMPS), where the protocol has a way to. */
  words: boolean;
}
