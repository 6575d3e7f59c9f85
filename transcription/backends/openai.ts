import { PermanentError, RecoverableError } from '../../core/errors.js';
import type { AudioFile, CallOptions, SyncBackend, SyncEndpoint, TranscribeOutcome } from './types.js';
import { excerpt, postAudio, type RawAnswer, readAnswer } from './http.js';
import { segmentsFromAnswer } from './segments.js';

/**
 * OpenAI's speech-to-text API, as OpenAI, Groq, Speaches (faster-whisper-server) and LocalAI serve it:
 * `POST {base}/v1/audio/transcriptions` (or `{base}/audio/transcriptions` when the base already ends in `/v1`),
 * multipart `file`, `model`, `response_format=verbose_json`, `timestamp_granularities[]=segment`, `temperature=0`
 * and `language` when ASR_LANGUAGE is set. The answer's `segments` carry `start`/`end` in seconds.
 *
 * whisper.cpp's server (`whisper-cpp`) takes the same form at `POST {base}/inference`, without `model` (it runs
 * the model it was started with) or `timestamp_granularities[]`; it reports some failures as 200 `{"error": ...}`.
 *
 * A model that gives no timestamps (gpt-4o-transcribe refuses `verbose_json` with a 400 naming it) is asked again
 * with `response_format=json`, and this process remembers that for the server and model: each chunk is then one
 * segment.
 */
const textOnly = new Set<string>();

/** For tests: forget which models gave text only. */
export function resetTranscriptionCapabilities(): void {
  textOnly.clear();
}

const REFUSES_VERBOSE = /response_format|verbose_json|timestamp_granularities/i;

export function openaiBackend(e: SyncEndpoint, kind: 'openai' | 'whisper-cpp'): SyncBackend {
  const url =
    kind === 'whisper-cpp' ? `${e.baseUrl}/inference` : /\/v1$/.test(e.baseUrl) ? `${e.baseUrl}/audio/transcriptions` : `${e.baseUrl}/v1/audio/transcriptions`;
  const key = `${url} ${e.model ?? ''}`;
  const fields = (verbose: boolean): [string, string][] => [
    ...(kind === 'openai' && e.model ? ([['model', e.model]] as [string, string][]) : []),
    ['response_format', verbose ? 'verbose_json' : 'json'],
    ...(kind === 'openai' && verbose ? ([['timestamp_granularities[]', 'segment']] as [string, string][]) : []),
    ['temperature', '0'],
    ...(e.language ? ([['language', e.language]] as [string, string][]) : []),
  ];
  const send = (audio: AudioFile, o: CallOptions, verbose: boolean): Promise<RawAnswer> =>
    postAudio(url, audio, 'file', fields(verbose), { ...o, apiKey: e.apiKey });

  return {
    kind,
    async transcribe(audio, o): Promise<TranscribeOutcome> {
      let raw = await send(audio, o, !textOnly.has(key));
      if (raw.status === 400 && kind === 'openai' && !textOnly.has(key) && REFUSES_VERBOSE.test(raw.text)) {
        textOnly.add(key);
        raw = await send(audio, o, false);
      }
      const answer = readAnswer(raw);
      if (answer.kind === 'busy') return answer;
      const body = answer.body as { error?: unknown } | null;
      const segments = segmentsFromAnswer(body, audio.seconds);
      if (segments) return { kind: 'segments', segments };
      // whisper.cpp answers 200 with {"error": "..."} when it cannot read the audio.
      if (body && typeof body === 'object' && body.error !== undefined) {
        throw new PermanentError(`The transcription backend failed: ${excerpt(JSON.stringify(body))}`);
      }
      throw new RecoverableError(`The transcription backend answered without segments or text: ${excerpt(JSON.stringify(body))}`);
    },
  };
}
