import { PermanentError } from '../core/errors.js';
import { type CallContext, excerpt, readText, RecoverableError, request, statusFailure } from './http.js';
import { checkModelAnswer, fromModel, isUsable, MODEL_ANSWER_SCHEMA, type Origin, type SchemaRecipe } from './recipe.js';

/**
 * The parsing phase's language model: any OpenAI-compatible `POST {LLM_API_BASE_URL}/chat/completions`.
 *
 * The answer is constrained with `response_format: {type: "json_schema", strict: true}` (MODEL_ANSWER_SCHEMA) and
 * checked with ajv all the same. A server that rejects json_schema (400 naming response_format or json_schema) is
 * asked again in `json_object` mode with the schema in the prompt, and this process remembers it for that server.
 *
 * Failures: a refusal, a content filter, or an answer saying the post holds no recipe are permanent (the same post
 * gets the same answer). Malformed JSON, or JSON that breaks the schema, is recoverable: models are not
 * deterministic and the next attempt usually succeeds; after QUEUE_RETRY_ATTEMPTS the item is `unhealthy`, and a
 * retry (perhaps with another LLM_MODEL) is the user's call. 401/403/404 and other 4xx are permanent (wrong key,
 * model or URL); 408, 429 (with Retry-After) and 5xx recoverable.
 */
export interface LlmEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
}

export interface PostText {
  url: string;
  title?: string | undefined;
  text: string;
  thumbnail?: string | undefined;
}

/** The longest post text sent to the model (a caption is far shorter). */
const MAX_PROMPT_TEXT = 12_000;

/** Servers and models (`<base URL> <model>`) that refused json_schema in this process: json_object straight away. */
const noJsonSchema = new Set<string>();

const SYSTEM = [
  'You turn social media posts into structured cooking recipes.',
  'Read the post text and answer with JSON only.',
  'If the text holds no recipe (no ingredients and no cooking steps), set isRecipe to false, recipe to null, and say why in notRecipeReason.',
  'Otherwise set isRecipe to true and fill recipe: keep ingredients and steps as written (one per entry, quantities and units included), translate nothing, and invent nothing that is not in the text.',
  'Use null for what the text does not say; durations are ISO 8601 (PT15M).',
].join(' ');

function userMessage(p: PostText): string {
  return [`Post URL: ${p.url}`, p.title ? `Post title: ${p.title}` : undefined, 'Post text:', p.text.slice(0, MAX_PROMPT_TEXT)]
    .filter(Boolean)
    .join('\n');
}

export interface ParsedRecipe {
  recipe: SchemaRecipe;
  mode: 'json_schema' | 'json_object';
}

export async function parseWithModel(ep: LlmEndpoint, post: PostText, ctx: CallContext): Promise<ParsedRecipe> {
  const key = `${ep.baseUrl} ${ep.model}`;
  if (!noJsonSchema.has(key)) {
    const first = await complete(ep, post, 'json_schema', ctx);
    if (first.kind === 'answer') return { recipe: interpret(first.content, post), mode: 'json_schema' };
    noJsonSchema.add(key);
  }
  const second = await complete(ep, post, 'json_object', ctx);
  if (second.kind !== 'answer') throw new PermanentError('The language model rejected both json_schema and json_object response formats');
  return { recipe: interpret(second.content, post), mode: 'json_object' };
}

/** For tests: forget which servers refused json_schema. */
export function resetModelCapabilities(): void {
  noJsonSchema.clear();
}

type Completion = { kind: 'answer'; content: string } | { kind: 'format-unsupported' };

async function complete(ep: LlmEndpoint, post: PostText, mode: 'json_schema' | 'json_object', ctx: CallContext): Promise<Completion> {
  const what = 'The language model';
  const system =
    mode === 'json_schema' ? SYSTEM : `${SYSTEM}\nThe JSON must match this JSON Schema exactly:\n${JSON.stringify(MODEL_ANSWER_SCHEMA)}`;
  const body = {
    model: ep.model,
    temperature: 0,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: userMessage(post) },
    ],
    response_format:
      mode === 'json_schema'
        ? { type: 'json_schema', json_schema: { name: 'recipe', strict: true, schema: MODEL_ANSWER_SCHEMA } }
        : { type: 'json_object' },
  };
  const res = await request(
    what,
    `${ep.baseUrl}/chat/completions`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(ep.apiKey && { authorization: `Bearer ${ep.apiKey}` }) },
      body: JSON.stringify(body),
    },
    ctx,
  );
  const text = await readText(what, res, ctx);
  if (!res.ok) {
    if (mode === 'json_schema' && (res.status === 400 || res.status === 422) && /response_format|json_schema|structured output/i.test(text)) {
      return { kind: 'format-unsupported' };
    }
    const hint =
      res.status === 401 || res.status === 403 ? ' (check LLM_API_KEY)' : res.status === 404 ? ' (check LLM_API_BASE_URL and LLM_MODEL)' : '';
    throw statusFailure(what, res, text, hint);
  }
  let data: { choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[] };
  try {
    data = JSON.parse(text) as typeof data;
  } catch {
    throw new RecoverableError(`${what} answered 200 with a body that is not JSON: ${excerpt(text, 200)}`);
  }
  const choice = data.choices?.[0];
  const refusal = choice?.message?.refusal;
  if (typeof refusal === 'string' && refusal.trim()) throw new PermanentError(`${what} declined: ${excerpt(refusal, 300)}`);
  if (choice?.finish_reason === 'content_filter') throw new PermanentError(`${what} withheld its answer (content filter)`);
  const content = choice?.message?.content;
  if (typeof content !== 'string' || !content.trim()) throw new RecoverableError(`${what} answered without content`);
  return { kind: 'answer', content };
}

/** The model's JSON, checked: a recipe, or the reason it is not one. */
function interpret(content: string, post: PostText): SchemaRecipe {
  const what = 'The language model';
  // json_object mode on some servers still wraps the JSON in a Markdown fence.
  const raw = content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new RecoverableError(`${what} answered with malformed JSON: ${excerpt(raw, 200)}`);
  }
  const checked = checkModelAnswer(value);
  if (!checked.ok) throw new RecoverableError(`${what}'s answer does not match the recipe schema: ${checked.problem}`);
  const { answer } = checked;
  const origin: Origin = { url: post.url, thumbnail: post.thumbnail };
  if (!answer.isRecipe || !answer.recipe) {
    throw new PermanentError(`No recipe in the post: ${answer.notRecipeReason?.trim() || 'the language model found none'}`);
  }
  const recipe = fromModel(answer.recipe, origin);
  if (!isUsable(recipe)) throw new PermanentError('No recipe in the post: the language model found no name, ingredients or steps');
  return recipe;
}
