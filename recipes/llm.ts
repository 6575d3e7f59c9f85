import { PermanentError } from '../core/errors.js';
import { type Conversion, conversionInstruction, converts } from './language.js';
import type { CallContext } from '../outbound/http.js';
import { RecoverableError } from '../outbound/http.js';
import { answerJson, chatJson, type LlmEndpoint, type ParseMode } from '../llm/chat.js';
import { checkModelAnswer, fromModel, isUsable, MAX_RECIPES, MODEL_ANSWER_SCHEMA, normalizeModelAnswer, type Origin, type SchemaRecipe } from './recipe.js';

// The client (API styles, response-format modes, failures) is shared with transcription: llm/chat.ts.
export { answerJson, resetModelCapabilities, type LlmEndpoint, type ParseMode } from '../llm/chat.js';

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

/**
 * The parsing phase's question to the language model (llm/chat.ts asks it). Whatever the mode, models answer in
 * their own ways: JSON in a Markdown fence or after a sentence, a reasoning model's `<think>` block first, a bare
 * recipe without the wrapper, numbers and durations as text, ingredient and step objects. The JSON is found,
 * normalised (recipes/recipe.ts) and then validated with ajv.
 *
 * Failures: a refusal, a content filter, an answer saying the post holds no recipe, or an answer with no usable
 * recipe in it are permanent (the same post gets the same answer). An answer with no JSON to be found (cut off,
 * say) is recoverable: models are not deterministic and the next attempt usually succeeds; after
 * QUEUE_RETRY_ATTEMPTS the item is `unhealthy`.
 */
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

export interface ParsedRecipes {
  /** One or more, in the order of the post. */
  recipes: SchemaRecipe[];
  /** Entries of the answer left out as unusable. */
  skipped: number;
  mode: ParseMode;
}

export async function parseWithModel(ep: LlmEndpoint, post: PostText, ctx: CallContext): Promise<ParsedRecipes> {
  const ask = {
    system: systemPrompt(post.conversion),
    user: userMessage(post),
    schema: MODEL_ANSWER_SCHEMA,
    schemaName: 'recipe',
    ...(post.images?.length && { images: post.images.map((i) => i.url) }),
  };
  const { content, mode } = await chatJson(ep, ask, ctx);
  return { ...recipesFromAnswer(content, post), mode };
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
