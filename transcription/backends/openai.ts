import { PermanentError, RecoverableError } from '../../core/errors.js';
import type { AudioFile, CallOptions, SyncBackend, SyncEndpoint, TranscribeOutcome } from './types.js';
import { excerpt, postAudio, type RawAnswer, readAnswer } from './http.js';
import { segmentsFromAnswer } from './segments.js';

/**
 * OpenAI's speech-to-text API, as OpenAI, Groq, Speaches (faster-whisper-server) and LocalAI serve it:
 * `POST {base}/v1/audio/transcriptions` (or `{base}/audio/transcriptions` when the base already ends in `/v1`),
 * multipart `file`, `model`, `response_format=verbose_json`, `timestamp_granularities[]=segment` (and `word`, unless
 * ASR_WORD_TIMESTAMPS=false: the answer then has a top-level `words` list), `temperature=0` and `language` when
 * ASR_LANGUAGE is set. The answer's `segments` carry `start`/`end` in seconds.
 *
 * ASR_DIARIZE=true asks for speakers the way OpenAI's diarizing model (gpt-4o-transcribe-diarize) takes it:
 * `response_format=diarized_json` with `chunking_strategy=auto` (required over 30 s) and no granularities (that
 * format has no word times); its segments carry `speaker` (`A`, `B`, ...).
 *
 * whisper.cpp's server (`whisper-cpp`) takes the same form at `POST {base}/inference`, without `model` (it runs
 * the model it was started with) or `timestamp_granularities[]` (its `verbose_json` has words per segment); it
 * reports some failures as 200 `{"error": ...}`.
 *
 * A model that refuses a format (a 400 naming `response_format`, `diarized_json`, `verbose_json` or
 * `timestamp_granularities`: gpt-4o-transcribe refuses `verbose_json`, whisper-1 `diarized_json`) is asked again
 * with the next one down (diarized_json, verbose_json, json), and this process remembers that for the server and
 * model. With `json`, each chunk is one segment.
 */
type Format = 'diarized_json' | 'verbose_json' | 'json';
const fallbackFrom = new Map<string, Format>();

/** For tests: forget which models refused which format. */
export function resetTranscriptionCapabilities(): void {
  fallbackFrom.clear();
}

const REFUSES_FORMAT = /response_format|diarized_json|verbose_json|timestamp_granularities/i;

export function openaiBackend(e: SyncEndpoint, kind: 'openai' | 'whisper-cpp'): SyncBackend {
  const url =
    kind === 'whisper-cpp' ? `${e.baseUrl}/inference` : /\/v1$/.test(e.baseUrl) ? `${e.baseUrl}/audio/transcriptions` : `${e.baseUrl}/v1/audio/transcriptions`;
  const key = `${url} ${e.model ?? ''}`;
  const ladder: Format[] = [...(kind === 'openai' && e.diarize ? (['diarized_json'] as const) : []), 'verbose_json', 'json'];
  const fields = (format: Format): [string, string][] => [
    ...(kind === 'openai' && e.model ? ([['model', e.model]] as [string, string][]) : []),
    ['response_format', format],
    ...(kind === 'openai' && format === 'diarized_json' ? ([['chunking_strategy', 'auto']] as [string, string][]) : []),
    ...(kind === 'openai' && format === 'verbose_json' ? ([['timestamp_granularities[]', 'segment']] as [string, string][]) : []),
    ...(kind === 'openai' && format === 'verbose_json' && e.words ? ([['timestamp_granularities[]', 'word']] as [string, string][]) : []),
    ['temperature', '0'],
    ...(e.language ? ([['language', e.language]] as [string, string][]) : []),
  ];
  const send = (audio: AudioFile, o: CallOptions, format: Format): Promise<RawAnswer> =>
    postAudio(url, audio, 'file', fields(format), { ...o, apiKey: e.apiKey });

  return {
    kind,
    async transcribe(audio, o): Promise<TranscribeOutcome> {
      let at = Math.max(0, ladder.indexOf(fallbackFrom.get(key) ?? ladder[0]!));
      let raw = await send(audio, o, ladder[at]!);
      while (raw.status === 400 && kind === 'openai' && at + 1 < ladder.length && REFUSES_FORMAT.test(raw.text)) {
        at++;
        fallbackFrom.set(key, ladder[at]!);
        raw = await send(audio, o, ladder[at]!);
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
