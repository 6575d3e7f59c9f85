import { PermanentError } from '../core/errors.js';
import type { Config } from '../core/config.js';
import { type CallContext, excerpt, readText, RecoverableError, request, statusFailure } from '../outbound/http.js';
import type { LlmApiStyle } from './configuration.js';

/**
 * The one client of the language model (LLM_API_STYLE), shared by the recipe queue (recipes/llm.ts) and
 * transcription's translations and summaries (transcription/derived/):
 *
 * - `openai`: any OpenAI-compatible `POST {LLM_API_BASE_URL}/chat/completions`. The answer is constrained with
 *   `response_format: {type: "json_schema", strict: true}`. A server that rejects it (400 or 422 naming
 *   response_format, json_schema or structured output) is asked in `json_object` mode with the schema in the prompt,
 *   and one that rejects that too with no response format at all.
 * - `ollama`: Ollama's native `POST {base}/api/chat` (`stream: false`) with the schema as its `format`; a server
 *   too old for schemas (400 naming the format) is asked with `format: "json"` and the schema in the prompt.
 * This process remembers, per server and model, the first mode that was accepted.
 *
 * Failures: a refusal or a content filter are permanent; an answer without content or a body that is not JSON are
 * recoverable (models are not deterministic). 401/403/404 and other 4xx are permanent (wrong key, model or URL);
 * 408, 429 (with Retry-After) and 5xx recoverable.
 */
export interface LlmEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Default `openai`. */
  style?: LlmApiStyle;
}

/** The configured endpoint, or a permanent failure saying what to set. */
export function llmEndpoint(config: Pick<Config, 'llm'>): LlmEndpoint {
  const c = config.llm;
  if (!c.baseUrl) throw new PermanentError('No language model is configured: set LLM_API_BASE_URL (and LLM_API_KEY, LLM_MODEL)');
  return { baseUrl: c.baseUrl, apiKey: c.apiKey, model: c.model, style: c.style };
}

/** What is asked: the instructions, the text, and the JSON Schema the answer must match. */
export interface ChatAsk {
  system: string;
  user: string;
  schema: Record<string, unknown>;
  /** The schema's name in `json_schema` mode. */
  schemaName: string;
  /** Images for a model that takes them (LLM_VISION): `data:` URLs, or http(s) URLs an OpenAI-compatible server fetches. */
  images?: string[];
}

/** How the schema is sent, most constrained first, per API style. */
const MODES = {
  openai: ['json_schema', 'json_object', 'prompt'],
  ollama: ['ollama_schema', 'ollama_json'],
} as const;
export type ParseMode = (typeof MODES)[LlmApiStyle][number];

/** Servers and models (`<style> <base URL> <model>`) whose first modes were refused in this process: the mode to start with. */
const firstMode = new Map<string, number>();

/** For tests: forget which servers refused which modes. */
export function resetModelCapabilities(): void {
  firstMode.clear();
}

/** The model's answer (its text, to be read with answerJson) and the mode it was asked in. */
export async function chatJson(ep: LlmEndpoint, ask: ChatAsk, ctx: CallContext): Promise<{ content: string; mode: ParseMode }> {
  const modes = MODES[ep.style ?? 'openai'];
  const key = `${ep.style ?? 'openai'} ${ep.baseUrl} ${ep.model}`;
  for (let i = firstMode.get(key) ?? 0; i < modes.length; i++) {
    const mode = modes[i]!;
    const answer = await complete(ep, ask, mode, ctx);
    if (answer.kind === 'answer') return { content: answer.content, mode };
    firstMode.set(key, i + 1);
  }
  throw new PermanentError(`The language model rejected every response format (${modes.join(', ')})`);
}

type Completion = { kind: 'answer'; content: string } | { kind: 'format-unsupported' };

/**
 * The user's message with its images: OpenAI-compatible servers take content parts (`image_url`, a URL or a data
 * URL); Ollama's native API takes base64 images beside the text (data URLs only: Ollama does not fetch URLs).
 */
function userTurn(ask: ChatAsk, ollama: boolean): Record<string, unknown> {
  const images = ask.images ?? [];
  if (!images.length) return { role: 'user', content: ask.user };
  if (ollama) {
    const base64 = images.map((url) => /^data:[^;]+;base64,(.*)$/s.exec(url)?.[1]).filter((b): b is string => Boolean(b));
    return { role: 'user', content: ask.user, ...(base64.length && { images: base64 }) };
  }
  return { role: 'user', content: [{ type: 'text', text: ask.user }, ...images.map((url) => ({ type: 'image_url', image_url: { url } }))] };
}

const REFUSES_FORMAT = {
  openai: /response_format|json_schema|json_object|structured output/i,
  ollama: /format|schema/i,
};

async function complete(ep: LlmEndpoint, ask: ChatAsk, mode: ParseMode, ctx: CallContext): Promise<Completion> {
  const what = 'The language model';
  const constrained = mode === 'json_schema' || mode === 'ollama_schema';
  const system = constrained ? ask.system : `${ask.system}\nThe JSON must match this JSON Schema exactly:\n${JSON.stringify(ask.schema)}`;
  const ollama = mode === 'ollama_schema' || mode === 'ollama_json';
  const messages = [{ role: 'system', content: system }, userTurn(ask, ollama)];
  const [url, body] = ollama
    ? [
        // Ollama's native API is at the server's root: a base URL ending in /v1 or /api (its other APIs) is forgiven.
        `${ep.baseUrl.replace(/\/(v1|api)$/, '')}/api/chat`,
        { model: ep.model, stream: false, messages, format: mode === 'ollama_schema' ? ask.schema : 'json', options: { temperature: 0 } },
      ]
    : [
        `${ep.baseUrl}/chat/completions`,
        {
          model: ep.model,
          temperature: 0,
          messages,
          ...(mode === 'json_schema' && { response_format: { type: 'json_schema', json_schema: { name: ask.schemaName, strict: true, schema: ask.schema } } }),
          ...(mode === 'json_object' && { response_format: { type: 'json_object' } }),
        },
      ];
  const res = await request(
    what,
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(ep.apiKey && { authorization: `Bearer ${ep.apiKey}` }) },
      body: JSON.stringify(body),
    },
    ctx,
  );
  const text = await readText(what, res, ctx);
  if (!res.ok) {
    const last = mode === 'prompt' || mode === 'ollama_json';
    if (!last && (res.status === 400 || res.status === 422) && REFUSES_FORMAT[ollama ? 'ollama' : 'openai'].test(text)) {
      return { kind: 'format-unsupported' };
    }
    const images = Boolean(ask.images?.length) && res.status >= 400 && res.status < 500 && /image|vision|multimodal|content part/i.test(text);
    const hint = images
      ? ' (the model does not take images: set LLM_VISION=false, or LLM_MODEL to a vision model)'
      : res.status === 401 || res.status === 403
        ? ' (check LLM_API_KEY)'
        : res.status === 404
          ? ' (check LLM_API_BASE_URL, LLM_API_STYLE and LLM_MODEL)'
          : '';
    throw statusFailure(what, res, text, hint);
  }
  let data: {
    choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[];
    message?: { content?: unknown };
  };
  try {
    data = JSON.parse(text) as typeof data;
  } catch {
    throw new RecoverableError(`${what} answered 200 with a body that is not JSON: ${excerpt(text, 200)}`);
  }
  if (ollama) {
    const content = data.message?.content;
    if (typeof content !== 'string' || !content.trim()) throw new RecoverableError(`${what} answered without content`);
    return { kind: 'answer', content };
  }
  const choice = data.choices?.[0];
  const refusal = choice?.message?.refusal;
  if (typeof refusal === 'string' && refusal.trim()) throw new PermanentError(`${what} declined: ${excerpt(refusal, 300)}`);
  if (choice?.finish_reason === 'content_filter') throw new PermanentError(`${what} withheld its answer (content filter)`);
  const content = choice?.message?.content;
  if (typeof content !== 'string' || !content.trim()) throw new RecoverableError(`${what} answered without content`);
  return { kind: 'answer', content };
}

/**
 * The JSON in a model's answer: the whole answer, else the first Markdown code fence that parses, else the span
 * from the first `{` (or `[`) to the last `}` (or `]`). A reasoning model's `<think>` block is skipped.
 */
export function answerJson(content: string): unknown {
  const answer = content.replace(/<think>[\s\S]*?(<\/think>|$)/gi, '').trim();
  const attempts = [answer];
  for (const m of answer.matchAll(/```[a-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/gi)) attempts.push(m[1]!.trim());
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const a = answer.indexOf(open);
    const b = answer.lastIndexOf(close);
    if (a !== -1 && b > a) attempts.push(answer.slice(a, b + 1));
  }
  for (const candidate of attempts) {
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      /* the next place */
    }
  }
  throw new RecoverableError(`The language model answered with malformed JSON: ${excerpt(answer, 200)}`);
}
