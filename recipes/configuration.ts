import type { ConfigSection, SectionRows } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { baseUrl, bool, int, oneOf, parser, resolvedPath, text } from '../core/settings.js';
import { canonicalLanguage } from '../core/languages.js';
import { UNIT_SYSTEMS, type UnitSystem } from './language.js';

export const RECIPE_MANAGERS = ['mealie', 'tandoor'] as const;
export type RecipeManagerKind = (typeof RECIPE_MANAGERS)[number];

/**
 * When a post's video is transcribed for the model (recipes/speech.ts): `auto`, when the caption holds no recipe;
 * `always`, for every post with a video; `off`, never.
 */
export const SPEECH_MODES = ['auto', 'always', 'off'] as const;
export type SpeechMode = (typeof SPEECH_MODES)[number];

export interface RecipesConfig {
  /** Items processed at once (the `recipes` concurrency pool). */
  concurrency: number;
  /** Longest attempt of one phase (its HTTP calls and yt-dlp stop then); Temporal's timeout backs it up. */
  timeoutMs: number;
  /** Attempts of a phase for recoverable failures (network, timeouts, 5xx, 429); then the item is `unhealthy`. */
  retryAttempts: number;
  /** The first wait before another attempt; it doubles each time, up to a minute. */
  retryBackoffMs: number;
  /** False: items are accepted and wait `pending` (the pool grants no slot) until a worker starts with it true. */
  processingEnabled: boolean;
  /** How long the deprecated synchronous POST /api/extract waits for the item before it answers 202. */
  extractWaitMs: number;
  manager: RecipeManagerKind;
  /** Where Gristmill reaches the recipe manager's API; unset: items fail at uploading saying so. */
  managerBaseUrl: string | undefined;
  /** Where users reach it, for `recipeManagerUrl` (defaults to the base URL). */
  managerPublicUrl: string | undefined;
  managerToken: string | undefined;
  /** Mealie's group slug in recipe links (`{base}/g/{group}/r/{slug}`). */
  mealieGroup: string;
  /** A Netscape cookies file for yt-dlp (Instagram often needs a logged-in session). */
  cookiesFile: string | undefined;
  /** The language recipes are written in (a BCP 47 tag); unset: the post's own. An item may ask for another. */
  language: string | undefined;
  /** The unit system quantities are converted to; `keep`: as the post has them. An item may ask for another. */
  units: UnitSystem;
  /** When the post's video is transcribed (the transcription service, as a child workflow) for the model to read. */
  speech: SpeechMode;
  /** Longest video transcribed; a longer one fails the item (`error`). */
  speechMaxSeconds: number;
  /** The model takes images: the post's pictures and frames of its video go with the text. */
  vision: boolean;
  /** At most this many images per item (pictures first, then frames). */
  visionMaxImages: number;
  /** At most this many of them frames of the video. */
  visionMaxFrames: number;
  /** An image larger than this is left out (frames are scaled down to fit far below it). */
  visionMaxImageBytes: number;
}

/** A BCP 47 tag of a language Node knows; anything else stops startup, naming the variable. */
const language = parser('a BCP 47 language tag, e.g. `en`, `de`, `pt-BR`', (raw, name) => {
  const tag = canonicalLanguage(raw);
  if (!tag) throw new ConfigError(`${name} must be a BCP 47 language tag of a known language, e.g. en, de, pt-BR (got "${raw}")`);
  return tag;
});

declare module '../core/config.js' {
  interface ServiceConfigs {
    /** The recipe queue: concurrency, limits, the language model and the recipe manager. */
    recipes: RecipesConfig;
  }
}

const ROWS: SectionRows<RecipesConfig> = {
  concurrency: {
    variable: 'QUEUE_CONCURRENCY', section: 'recipes', parse: int(1, 256), default: '2',
    meaning: 'recipe queue items processed at once (the `recipes` concurrency pool)',
  },
  timeoutMs: {
    variable: 'QUEUE_TIMEOUT_MS', section: 'recipes', parse: int(100, 3_600_000), default: '30000',
    meaning: "longest attempt of one phase of an item (its HTTP calls and yt-dlp are stopped then; Temporal's timeout backs it up)",
  },
  retryAttempts: {
    variable: 'QUEUE_RETRY_ATTEMPTS', section: 'recipes', parse: int(1, 100), default: '3',
    meaning: 'attempts of a phase for recoverable failures (network, timeouts, 5xx, 429); then the item is `unhealthy`',
  },
  retryBackoffMs: {
    variable: 'QUEUE_RETRY_BACKOFF_MS', section: 'recipes', parse: int(10, 600_000), default: '1000',
    meaning: "wait before a phase's second attempt, doubling each time up to a minute (a `Retry-After` wins)",
  },
  processingEnabled: {
    variable: 'QUEUE_PROCESSING_ENABLED', section: 'recipes', parse: bool(), default: 'true',
    meaning: '`false`: items are accepted and wait `pending` (the pool grants no slot) until a worker starts with it `true`',
  },
  extractWaitMs: {
    variable: 'QUEUE_EXTRACT_WAIT_MS', section: 'recipes', parse: int(100, 3_600_000), default: '120000',
    meaning: 'how long the deprecated synchronous `POST /api/extract` waits for the item before answering 202',
  },
  manager: { variable: 'RECIPE_MANAGER', section: 'recipes', parse: oneOf(RECIPE_MANAGERS, { anyCase: true }), default: 'mealie', meaning: 'the recipe manager recipes are uploaded to' },
  managerBaseUrl: {
    variable: 'RECIPE_MANAGER_BASE_URL', section: 'recipes', parse: baseUrl,
    meaning: "where Gristmill reaches the recipe manager's API; unset: items fail at uploading saying so",
  },
  managerPublicUrl: {
    variable: 'RECIPE_MANAGER_PUBLIC_URL', section: 'recipes', parse: baseUrl, default: { text: '`RECIPE_MANAGER_BASE_URL`' },
    meaning: 'where users open it, for `recipeManagerUrl`',
  },
  managerToken: { variable: 'RECIPE_MANAGER_TOKEN', section: 'recipes', parse: text(), secret: true, meaning: "the recipe manager's API token" },
  mealieGroup: {
    variable: 'MEALIE_GROUP_SLUG', section: 'recipes', parse: text(), default: 'home',
    meaning: 'the group in Mealie recipe links (`{base}/g/{group}/r/{slug}`)',
  },
  cookiesFile: {
    variable: 'RECIPE_COOKIES_FILE', section: 'recipes', parse: resolvedPath(),
    meaning: 'a Netscape cookies file handed to yt-dlp (Instagram often wants a logged-in session)',
  },
  language: {
    variable: 'RECIPE_LANGUAGE', section: 'recipes', parse: language,
    meaning: 'the language recipes are written in: the model translates them (the original text is kept in the recipe\'s notes); unset: the post\'s own language. `POST /api/queue` may ask for another per item',
  },
  units: {
    variable: 'RECIPE_UNITS', section: 'recipes', parse: oneOf(UNIT_SYSTEMS, { anyCase: true }), default: 'keep',
    meaning: 'the unit system the model converts quantities to: `metric`, `us` (US customary) or `keep` (as the post has them). `POST /api/queue` may ask for another per item',
  },
  speech: {
    variable: 'RECIPE_SPEECH', section: 'recipes', parse: oneOf(SPEECH_MODES, { anyCase: true }), default: 'auto',
    meaning:
      "when a post's video is transcribed (the transcription service and its `ASR_*` backend) and the transcript read by the model with the caption: " +
      '`auto`, when the caption holds no recipe (it only points to the video, or the model finds none in it); `always`, for every post with a video; `off`, never',
  },
  speechMaxSeconds: {
    variable: 'RECIPE_SPEECH_MAX_SECONDS', section: 'recipes', parse: int(1, 86_400), default: '1200',
    meaning: "longest video whose speech is transcribed; a longer one fails the item (`error`) when its speech is needed",
  },
  vision: {
    variable: 'LLM_VISION', section: 'recipes', parse: bool(), default: 'false',
    meaning: "`true`: the model takes images, and the post's pictures and a few frames of its video (ffmpeg, scene changes) go to it with the text; `false`: the text only (the item's phases say the pictures were skipped)",
  },
  visionMaxImages: {
    variable: 'RECIPE_VISION_MAX_IMAGES', section: 'recipes', parse: int(1, 20), default: '6',
    meaning: 'most images sent to the model per item (the pictures first, then frames)',
  },
  visionMaxFrames: {
    variable: 'RECIPE_VISION_MAX_FRAMES', section: 'recipes', parse: int(0, 20), default: '3',
    meaning: "most frames of the video among them (`0`: none; the video is then not downloaded)",
  },
  visionMaxImageBytes: {
    variable: 'RECIPE_VISION_MAX_IMAGE_BYTES', section: 'recipes', parse: int(10_000, 20_000_000), default: '2000000',
    meaning: 'a picture larger than this is left out (frames are scaled to at most 768 pixels wide)',
  },
};

/** The recipe queue's settings (docs/configuration.md, "Recipe queue"), declared once; runtime/services.ts reads them. */
export const recipesConfiguration: ConfigSection = {
  sections: {
    recipes: { title: 'Recipe queue', about: 'Concurrency, limits and the recipe manager (recipes/); the language model is under [Language model](#language-model).' },
  },
  table: { recipes: ROWS },
};
