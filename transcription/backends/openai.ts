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
 * A model that refuses what it is asked (a 400 naming `response_format`, `diarized_json`, `verbose_json` or
 * `timestamp_granularities`: gpt-4o-transcribe refuses `verbose_json`, whisper-1 `diarized_json`, some servers word
 * times) is asked again for the next one down (diarized_json, verbose_json with words, verbose_json, json), and
 * this process remembers that for the server and model. With `json`, each chunk is one segment.
 */
/** What is asked, most first: speakers, then segments with words, then segments, then text only. */
type Ask = 'diarized_json' | 'verbose_json+words' | 'verbose_json' | 'json';
const fallbackFrom = new Map<string, Ask>();

/** For tests: forget which models refused which format. */
export function resetTranscriptionCapabilities(): void {
  fallbackFrom.clear();
}

const REFUSES_FORMAT = /response_format|diarized_json|verbose_json|timestamp_granularities/i;

const formatOf = (ask: Ask) => ask.replace('+words', '');

/** After a refusal: without word times when only they were refused, else the next response format down. */
function nextAsk(ladder: readonly Ask[], at: number, refusal: string): number {
  const onlyWords = /timestamp_granularities/i.test(refusal) && !/response_format|diarized_json|verbose_json/i.test(refusal);
  for (let next = at + 1; next < ladder.length; next++) {
    if (onlyWords || formatOf(ladder[next]!) !== formatOf(ladder[at]!)) return next;
  }
  return ladder.length - 1;
}

export function openaiBackend(e: SyncEndpoint, kind: 'openai' | 'whisper-cpp'): SyncBackend {
  const url =
    kind === 'whisper-cpp' ? `${e.baseUrl}/inference` : /\/v1$/.test(e.baseUrl) ? `${e.baseUrl}/audio/transcriptions` : `${e.baseUrl}/v1/audio/transcriptions`;
  const key = `${url} ${e.model ?? ''}`;
  const openai = kind === 'openai';
  const ladder: Ask[] = [
    ...(openai && e.diarize ? (['diarized_json'] as const) : []),
    ...(openai && e.words ? (['verbose_json+words'] as const) : []),
    'verbose_json',
    'json',
  ];
  const fields = (ask: Ask): [string, string][] => {
    const format = ask === 'verbose_json+words' ? 'verbose_json' : ask;
    const out: [string, string][] = [];
    if (openai && e.model) out.push(['model', e.model]);
    out.push(['response_format', format]);
    if (openai && ask === 'diarized_json') out.push(['chunking_strategy', 'auto']);
    if (openai && format === 'verbose_json') out.push(['timestamp_granularities[]', 'segment']);
    if (ask === 'verbose_json+words') out.push(['timestamp_granularities[]', 'word']);
    out.push(['temperature', '0']);
    if (e.language) out.push(['language', e.language]);
    return out;
  };
  const send = (audio: AudioFile, o: CallOptions, ask: Ask): Promise<RawAnswer> => postAudio(url, audio, 'file', fields(ask), { ...o, apiKey: e.apiKey });

  return {
    kind,
    async transcribe(audio, o): Promise<TranscribeOutcome> {
      let at = Math.max(0, ladder.indexOf(fallbackFrom.get(key) ?? ladder[0]!));
      let raw = await send(audio, o, ladder[at]!);
      while (raw.status === 400 && kind === 'openai' && at + 1 < ladder.length && REFUSES_FORMAT.test(raw.text)) {
        at = nextAsk(ladder, at, raw.text);
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
