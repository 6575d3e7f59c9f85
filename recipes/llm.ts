import type { LlmApiStyle } from './configuration.js';
import { PermanentError } from '../core/errors.js';
import { type Conversion, conversionInstruction, converts } from './language.js';
import { type CallContext, excerpt, readText, RecoverableError, request, statusFailure } from '../outbound/http.js';
import { checkModelAnswer, fromModel, isUsable, MAX_RECIPES, MODEL_ANSWER_SCHEMA, normalizeModelAnswer, type Origin, type SchemaRecipe } from './recipe.js';

/**
 * The parsing phase's language model, in the API style LLM_API_STYLE names:
 *
 * - `openai`: any OpenAI-compatible `POST {LLM_API_BASE_URL}/chat/completions`. The answer is constrained with
 *   `response_format: {type: "json_schema", strict: true}` (MODEL_ANSWER_SCHEMA). A server that rejects it (400 or
 *   422 naming response_format, json_schema or structured output) is asked in `json_object` mode with the schema
 *   in the prompt, and one that rejects that too with no response format at all.
 * - `ollama`: Ollama's native `POST {base}/api/chat` (`stream: false`) with the schema as its `format`; a server
 *   too old for schemas (400 naming the format) is asked with `format: "json"` and the schema in the prompt.
 * This process remembers, per server and model, the first mode that was accepted.
 *
 * Whatever the mode, models answer in their own ways: JSON in a Markdown fence or after a sentence, a reasoning
 * model's `<think>` block first, a bare recipe without the wrapper, numbers and durations as text, ingredient and
 * step objects. The JSON is found, normalised (recipes/recipe.ts) and then validated with ajv.
 *
 * Failures: a refusal, a content filter, an answer saying the post holds no recipe, or an answer with no usable
 * recipe in it are permanent (the same post gets the same answer). An answer with no JSON to be found (cut off,
 * say) is recoverable: models are not deterministic and the next attempt usually succeeds; after
 * QUEUE_RETRY_ATTEMPTS the item is `unhealthy`. 401/403/404 and other 4xx are permanent (wrong key, model or URL);
 * 408, 429 (with Retry-After) and 5xx recoverable.
 */
/**
 * The code of the PermanentError that says the model found no recipe in the post (the video's speech may still hold
 * one: recipes/speech.ts). A code, not a subclass: Temporal names a failure's type after the error's class, and only
 * `PermanentError` is never retried.
 */
export const NO_RECIPE = 'NO_RECIPE';
export const isNoRecipe = (err: unknown): boolean => err instanceof PermanentError && err.code === NO_RECIPE;

/** An image for a model that takes them (LLM_VISION): a `data:` URL, or an http(s) URL the model fetches itself. */
export interface ModelImage {
  url: string;
  /** Where it came from, for the prompt: a picture of the post or a frame of its video. */
  kind: 'picture' | 'frame';
}

export interface LlmEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Default `openai`. */
  style?: LlmApiStyle;
}

export interface PostText {
  url: string;
  title?: string | undefined;
  text: string;
  thumbnail?: string | undefined;
  /** The language and units to write the recipes in (recipes/language.ts); unset: as the post has them. */
  conversion?: Conversion | undefined;
  /** The post's pictures and frames of its video, for a model that takes images (recipes/vision.ts). */
  images?: ModelImage[] | undefined;
}

/** The longest post text sent to the model (a caption is far shorter). */
const MAX_PROMPT_TEXT = 12_000;

/** How the schema is sent, most constrained first, per API style. */
const MODES = {
  openai: ['json_schema', 'json_object', 'prompt'],
  ollama: ['ollama_schema', 'ollama_json'],
} as const;
export type ParseMode = (typeof MODES)[LlmApiStyle][number];

/** Servers and models (`<style> <base URL> <model>`) whose first modes were refused in this process: the mode to start with. */
const firstMode = new Map<string, number>();

/** The instructions: as the post has it, or translated and converted (recipes/language.ts). */
function systemPrompt(conversion: Conversion | undefined): string {
  const change = conversion && converts(conversion);
  return [
    'You turn social media posts into structured cooking recipes.',
    'Read the post text and answer with JSON only.',
    'If the text holds no recipe (no ingredients and no cooking steps), set isRecipe to false, recipes to an empty list, and say why in notRecipeReason.',
    'Otherwise set isRecipe to true and fill recipes with every recipe in the text, one entry each (a post may hold several): one ingredient or step per entry, quantities and units included.',
    change
      ? conversionInstruction(conversion)
      : 'Keep ingredients and steps as written and translate nothing.',
    'Invent nothing that is not in the text. Use null for what the text does not say; durations are ISO 8601 (PT15M).',
  ].join(' ');
}

function userMessage(p: PostText): string {
  const images = p.images?.length ? describeImages(p.images) : undefined;
  return [`Post URL: ${p.url}`, p.title ? `Post title: ${p.title}` : undefined, images, 'Post text:', p.text.slice(0, MAX_PROMPT_TEXT)]
    .filter(Boolean)
    .join('\n');
}

/** The prompt's word on the images that come with it (the recipe may be written on a picture, or shown in the video). */
function describeImages(images: ModelImage[]): string {
  const pictures = images.filter((i) => i.kind === 'picture').length;
  const frames = images.length - pictures;
  const parts = [pictures && `${pictures} picture${pictures === 1 ? '' : 's'} of the post`, frames && `${frames} frame${frames === 1 ? '' : 's'} of its video`].filter(Boolean);
  return `Images: ${parts.join(' and ')} come with the text; read the recipe from them too (text on screen, ingredients shown).`;
}

/**
 * The user's message with its images: OpenAI-compatible servers take content parts (`image_url`, a URL or a data
 * URL); Ollama's native API takes base64 images beside the text (data URLs only: Ollama does not fetch URLs).
 */
function userTurn(p: PostText, ollama: boolean): Record<string, unknown> {
  const text = userMessage(p);
  const images = p.images ?? [];
  if (!images.length) return { role: 'user', content: text };
  if (ollama) {
    const base64 = images.map((i) => /^data:[^;]+;base64,(.*)$/s.exec(i.url)?.[1]).filter((b): b is string => Boolean(b));
    return { role: 'user', content: text, ...(base64.length && { images: base64 }) };
  }
  return { role: 'user', content: [{ type: 'text', text }, ...images.map((i) => ({ type: 'image_url', image_url: { url: i.url } }))] };
}

export interface ParsedRecipes {
  /** One or more, in the order of the post. */
  recipes: SchemaRecipe[];
  /** Entries of the answer left out as unusable. */
  skipped: number;
  mode: ParseMode;
}

export async function parseWithModel(ep: LlmEndpoint, post: PostText, ctx: CallContext): Promise<ParsedRecipes> {
  const modes = MODES[ep.style ?? 'openai'];
  const key = `${ep.style ?? 'openai'} ${ep.baseUrl} ${ep.model}`;
  for (let i = firstMode.get(key) ?? 0; i < modes.length; i++) {
    const mode = modes[i]!;
    const answer = await complete(ep, post, mode, ctx);
    if (answer.kind === 'answer') return { ...recipesFromAnswer(answer.content, post), mode };
    firstMode.set(key, i + 1);
  }
  throw new PermanentError(`The language model rejected every response format (${modes.join(', ')})`);
}

/** For tests: forget which servers refused which modes. */
export function resetModelCapabilities(): void {
  firstMode.clear();
}

type Completion = { kind: 'answer'; content: string } | { kind: 'format-unsupported' };

const REFUSES_FORMAT = {
  openai: /response_format|json_schema|json_object|structured output/i,
  ollama: /format|schema/i,
};

async function complete(ep: LlmEndpoint, post: PostText, mode: ParseMode, ctx: CallContext): Promise<Completion> {
  const what = 'The language model';
  const constrained = mode === 'json_schema' || mode === 'ollama_schema';
  const base = systemPrompt(post.conversion);
  const system = constrained ? base : `${base}\nThe JSON must match this JSON Schema exactly:\n${JSON.stringify(MODEL_ANSWER_SCHEMA)}`;
  const ollama = mode === 'ollama_schema' || mode === 'ollama_json';
  const messages = [{ role: 'system', content: system }, userTurn(post, ollama)];
  const [url, body] = ollama
    ? [
        // Ollama's native API is at the server's root: a base URL ending in /v1 or /api (its other APIs) is forgiven.
        `${ep.baseUrl.replace(/\/(v1|api)$/, '')}/api/chat`,
        { model: ep.model, stream: false, messages, format: mode === 'ollama_schema' ? MODEL_ANSWER_SCHEMA : 'json', options: { temperature: 0 } },
      ]
    : [
        `${ep.baseUrl}/chat/completions`,
        {
          model: ep.model,
          temperature: 0,
          messages,
          ...(mode === 'json_schema' && { response_format: { type: 'json_schema', json_schema: { name: 'recipe', strict: true, schema: MODEL_ANSWER_SCHEMA } } }),
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
    const images = Boolean(post.images?.length) && res.status >= 400 && res.status < 500 && /image|vision|multimodal|content part/i.test(text);
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

/**
 * The model's answer as recipes, or why it is none: found, normalised, validated, and usable. A post may hold
 * several; an entry with no name or nothing to cook from is left out (and counted in `skipped`) when another is
 * usable. An empty list, or no usable entry, is no recipe (permanent). At most MAX_RECIPES are kept.
 */
export function recipesFromAnswer(content: string, post: Pick<PostText, 'url' | 'thumbnail'>): { recipes: SchemaRecipe[]; skipped: number } {
  const what = 'The language model';
  const checked = checkModelAnswer(normalizeModelAnswer(answerJson(content)));
  // The normalised answer always fits the schema; this is the check that it does.
  if (!checked.ok) throw new RecoverableError(`${what}'s answer does not match the recipe schema: ${checked.problem}`);
  const { answer } = checked;
  const origin: Origin = { url: post.url, thumbnail: post.thumbnail };
  if (!answer.isRecipe || !answer.recipes.length) {
    throw new PermanentError(`No recipe in the post: ${answer.notRecipeReason?.trim() || 'the language model found none'}`, NO_RECIPE);
  }
  const all = answer.recipes.map((r) => fromModel(r, origin));
  const recipes = all.filter(isUsable).slice(0, MAX_RECIPES);
  if (!recipes.length) throw new PermanentError('No recipe in the post: the language model found no name, ingredients or steps', NO_RECIPE);
  return { recipes, skipped: all.length - all.filter(isUsable).length };
}
