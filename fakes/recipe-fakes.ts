/**
 * The third parties of the recipe queue, as real HTTP servers on 127.0.0.1 (docs/recipes.md):
 *
 * - FakeSocialSite: post pages (a caption in Open Graph tags, a schema.org Recipe in JSON-LD, plain text), their
 *   pictures, and any status code.
 * - FakeLlm: OpenAI-compatible `POST /v1/chat/completions`, and Ollama's native `POST /api/chat` (`format` as a
 *   schema or "json"; `{message: {content}, done}`). By default it "reads" the post like a model would: lines
 *   starting with "- " are ingredients, numbered lines are steps, a post saying "not a recipe" is none. Scripted
 *   answers cover malformed JSON, 4xx/5xx, 429 with Retry-After, refusals, slow answers, servers without
 *   json_schema (or json_object, or schema format) support, and the ways models write their answers
 *   (ANSWER_STYLES). It counts requests in flight (concurrency) and notices callers that hang up.
 * - FakeRecipeManager: Mealie (`POST /api/recipes/create/html-or-json` -> 201 "slug") or Tandoor
 *   (`POST /api/recipe/` -> 201 {id}), bearer-token checked (401), scripted failures such as Mealie's 400
 *   BAD_RECIPE_DATA, the picture uploads, searching recipes by name and reading one (Mealie's `orgURL`,
 *   Tandoor's `source_url`), creates that are stored but answered late (`answerCreatesAfterMs`), and foods, units
 *   and Mealie's ingredient parser (fakes/manager-foods.ts) with Mealie's `PATCH /api/recipes/{slug}` (a food or
 *   unit id it does not have is a 500, as Mealie's database refuses it) and Tandoor's ids checked on create.
 * - fakeYtDlp: a stand-in `yt-dlp` executable (YTDLP_PATH) that answers `-J` for the URLs a test registers, as a
 *   site extractor (Instagram, TikTok) would, and "Unsupported URL" for the rest.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { FakeFoods } from './manager-foods.js';
import { transcriptAnswer, type TranscriptMisbehaviour } from './llm-transcripts.js';

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function close(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The smallest JPEG a browser shows: enough to be a picture. */
export const TINY_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

export interface PostPage {
  /** og:title. */
  title?: string;
  /** og:description: the caption. */
  caption?: string;
  /** og:image points at /img/<name>.jpg. */
  picture?: boolean;
  /** A JSON-LD block, as it is (e.g. {"@graph": [..., {"@type": "Recipe", ...}]}). */
  jsonLd?: unknown;
  /** Visible body text. */
  bodyText?: string;
  status?: number;
  contentType?: string;
}

export class FakeSocialSite {
  url = '';
  readonly pages = new Map<string, PostPage>();
  readonly hits: { path: string; at: number }[] = [];
  private server: http.Server | undefined;

  static async start(): Promise<FakeSocialSite> {
    const s = new FakeSocialSite();
    s.server = http.createServer((req, res) => s.serve(req, res));
    s.url = await listen(s.server);
    return s;
  }

  /** Registers a post; answers its URL. */
  add(name: string, page: PostPage): string {
    this.pages.set(name, page);
    return `${this.url}/p/${name}`;
  }

  pictureUrl(name: string): string {
    return `${this.url}/img/${name}.jpg`;
  }

  hitsOf(p: string): number {
    return this.hits.filter((h) => h.path === p).length;
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    this.hits.push({ path: p, at: Date.now() });
    const img = /^\/img\/([^/]+)\.jpg$/.exec(p);
    if (img) {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': TINY_JPEG.length });
      res.end(TINY_JPEG);
      return;
    }
    const m = /^\/p\/([^/]+)\/?$/.exec(p);
    const page = m && this.pages.get(m[1]!);
    if (!m || !page) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>Not found</body></html>');
      return;
    }
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    const html = `<!doctype html><html><head><title>${esc(page.title ?? 'Post')} • Social</title>
${page.title ? `<meta property="og:title" content="${esc(page.title)}">` : ''}
${page.caption ? `<meta property="og:description" content="${esc(page.caption)}">` : ''}
${page.picture ? `<meta property="og:image" content="${this.pictureUrl(m[1]!)}">` : ''}
${page.jsonLd ? `<script type="application/ld+json">${JSON.stringify(page.jsonLd)}</script>` : ''}
<script>window.__state = {"noise": true}</script>
</head><body><nav>Home Explore Reels</nav><main>${page.bodyText ? `<p>${esc(page.bodyText)}</p>` : ''}</main></body></html>`;
    res.writeHead(page.status ?? 200, { 'content-type': page.contentType ?? 'text/html; charset=utf-8' });
    res.end(html);
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

export type LlmAnswer =
  | { kind: 'read' }
  | { kind: 'recipe'; recipe: Record<string, unknown> }
  /** Several recipes (entries as they are: a malformed one too). */
  | { kind: 'recipes'; recipes: unknown[] }
  | { kind: 'not-recipe'; reason?: string }
  | { kind: 'malformed' }
  | { kind: 'fenced' }
  | { kind: 'style'; style: AnswerStyle }
  | { kind: 'refusal'; text?: string }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang-up' }
  /** A translation or summary of a transcript answered wrongly (fakes/llm-transcripts.ts). */
  | { kind: 'transcript'; misbehave: TranscriptMisbehaviour };

export interface LlmRequest {
  /** `/v1/chat/completions` or Ollama's `/api/chat`. */
  path: string;
  /** The request's body, each message's content as its text (content parts joined; see `raw` for the parts). */
  body: {
    model: string;
    messages: { role: string; content: string; images?: string[] }[];
    response_format?: { type: string; json_schema?: { name: string; strict: boolean; schema: unknown } };
    /** Ollama: a JSON schema, or "json". */
    format?: unknown;
    stream?: boolean;
    options?: Record<string, unknown>;
  };
  authorization: string | undefined;
  at: number;
  /** The images the request carried: `image_url` parts' URLs, and Ollama's base64 `images`. */
  images: string[];
  /** The body as sent: a message's content may be OpenAI content parts (`text`, `image_url`). */
  raw: { messages: { role: string; content: string | LlmContentPart[]; images?: string[] }[] };
  /** The caller closed the connection before the answer. */
  aborted: boolean;
  status?: number;
}

export type LlmContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** The text of a message, whether a string or content parts. */
export function messageText(content: string | LlmContentPart[]): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}

export class FakeLlm {
  url = '';
  readonly requests: LlmRequest[] = [];
  /** Answers for the next requests, in order; then `fallback`. */
  readonly script: LlmAnswer[] = [];
  fallback: LlmAnswer = { kind: 'read' };
  /** Each answer waits this long first (a slow model). */
  delayMs = 0;
  /** False: json_schema response formats are refused with 400, as some servers do. */
  supportsJsonSchema = true;
  /** False: json_object is refused too (a server that takes no response_format at all). */
  supportsJsonObject = true;
  /** False: Ollama's `format` takes only "json" (servers before structured outputs). */
  supportsSchemaFormat = true;
  /** False: a request with images is refused with 400, as a text-only model's server does. */
  supportsImages = true;
  inFlight = 0;
  maxInFlight = 0;
  private server: http.Server | undefined;

  static async start(): Promise<FakeLlm> {
    const s = new FakeLlm();
    s.server = http.createServer((req, res) => void s.serve(req, res));
    s.url = await listen(s.server);
    return s;
  }

  /** The base URL Gristmill is given (LLM_API_BASE_URL). */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  reset(): void {
    this.requests.length = 0;
    this.script.length = 0;
    this.fallback = { kind: 'read' };
    this.delayMs = 0;
    this.supportsJsonSchema = true;
    this.supportsJsonObject = true;
    this.supportsSchemaFormat = true;
    this.supportsImages = true;
    this.maxInFlight = this.inFlight;
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const ollama = req.url === '/api/chat';
    if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && !ollama)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: '404 page not found' }));
      return;
    }
    const raw = JSON.parse((await readBody(req)).toString('utf8')) as LlmRequest['raw'] & Omit<LlmRequest['body'], 'messages'>;
    const images = raw.messages.flatMap((m) => [
      ...(typeof m.content === 'string' ? [] : m.content.filter((p) => p.type === 'image_url').map((p) => p.image_url.url)),
      ...(m.images ?? []),
    ]);
    const body: LlmRequest['body'] = { ...raw, messages: raw.messages.map((m) => ({ ...m, content: messageText(m.content) })) };
    const record: LlmRequest = { path: req.url!, body, raw, authorization: req.headers.authorization, at: Date.now(), images, aborted: false };
    this.requests.push(record);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
    });
    try {
      const answer = this.script.shift() ?? this.fallback;
      if (this.delayMs) await sleep(this.delayMs);
      if (record.aborted) return;
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        record.status = status;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      if (!this.supportsJsonSchema && body.response_format?.type === 'json_schema') {
        return send(400, { error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", type: 'invalid_request_error', param: 'response_format' } });
      }
      if (!this.supportsJsonObject && body.response_format?.type === 'json_object') {
        return send(400, { error: { message: "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.", type: 'invalid_request_error', param: 'response_format' } });
      }
      if (!this.supportsImages && images.length) {
        return send(400, { error: { message: 'Invalid content type. image_url is only supported by certain models.', type: 'invalid_request_error', param: 'messages' } });
      }
      if (ollama && !this.supportsSchemaFormat && body.format !== undefined && body.format !== 'json') {
        return send(400, { error: 'invalid format: expected "json" or a JSON schema' });
      }
      const content = (s: string, extra: Record<string, unknown> = {}) =>
        ollama
          ? send(200, {
              model: body.model,
              created_at: new Date().toISOString(),
              message: { role: 'assistant', content: s },
              done_reason: 'stop',
              done: true,
              total_duration: 1_234_567,
              eval_count: 42,
            })
          : send(200, { id: 'chatcmpl-fake', object: 'chat.completion', model: body.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: s, ...extra } }] });
      switch (answer.kind) {
        case 'status':
          return send(answer.status, answer.body ?? { error: { message: `fake error ${answer.status}` } }, answer.headers);
        case 'malformed':
          return content('{"isRecipe": true, "recipe": {"name": "Lemon pasta", "recipeIngredient": ["200 g spaghetti"');
        case 'refusal':
          return content('', { content: null, refusal: answer.text ?? "I'm sorry, I can't help with that." });
        case 'not-recipe':
          return content(JSON.stringify({ isRecipe: false, notRecipeReason: answer.reason ?? 'The post is a photo of a cat.', recipes: [] }));
        case 'recipe':
          return content(JSON.stringify({ isRecipe: true, notRecipeReason: null, recipes: [answer.recipe] }));
        case 'recipes':
          return content(JSON.stringify({ isRecipe: true, notRecipeReason: null, recipes: answer.recipes }));
        case 'fenced':
          return content('```json\n' + JSON.stringify(readPost(body)) + '\n```');
        case 'style':
          return content(ANSWER_STYLES[answer.style]((readPost(body).recipes as StyleRecipe[])[0]!));
        case 'hang-up':
          res.destroy();
          return;
        case 'transcript':
          return content(transcriptAnswer(body.messages, answer.misbehave) ?? JSON.stringify(readPost(body)));
        default:
          // Transcription's translations and summaries (fakes/llm-transcripts.ts), else a recipe.
          return content(transcriptAnswer(body.messages) ?? JSON.stringify(readPost(body)));
      }
    } finally {
      this.inFlight--;
    }
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

/** What a model would make of the post: "- " lines are ingredients, "1." lines steps, the title the name. */
function readPost(body: LlmRequest['body']): Record<string, unknown> {
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  if (/not a recipe/i.test(user)) return { isRecipe: false, notRecipeReason: 'The post shows no ingredients or steps.', recipes: [] };
  const text = user.split('\nPost text:\n')[1] ?? user;
  const title = /^Post title: (.*)$/m.exec(user)?.[1];
  const lines = text.split(/\n|(?<=\.)\s+(?=\d+\.\s)|\s+(?=- )/).map((l) => l.trim());
  const ingredients = lines.filter((l) => l.startsWith('- ')).map((l) => l.slice(2).trim());
  const steps = lines.filter((l) => /^\d+\.\s/.test(l)).map((l) => l.replace(/^\d+\.\s*/, ''));
  return {
    isRecipe: true,
    notRecipeReason: null,
    recipes: [{
      name: title ?? (lines[0] ?? 'A recipe').replace(/[!:.].*$/, '').trim(),
      description: null,
      recipeYield: '2 servings',
      prepTime: 'PT10M',
      cookTime: 'PT12M',
      totalTime: 'not a duration',
      recipeIngredient: ingredients,
      recipeInstructions: steps,
      recipeCategory: ['Dinner'],
      recipeCuisine: 'Italian',
      keywords: ['quick', 'pasta'],
    }],
  };
}

/** The recipe fields an answer style writes out (the strict schema's). */
export interface StyleRecipe {
  name: string;
  description: string | null;
  recipeYield: string | null;
  prepTime: string | null;
  cookTime: string | null;
  recipeIngredient: string[];
  recipeInstructions: string[];
  recipeCategory: string[];
  recipeCuisine: string | null;
  keywords: string[];
}

const minutes = (iso: string | null) => Number(/PT(\d+)M/.exec(iso ?? '')?.[1] ?? 0);

/** "200 g spaghetti" as the parts models put in ingredient objects. */
function ingredientObject(line: string): Record<string, unknown> {
  const m = /^(\d+)\s*(g|ml|tbsp)?\s+([^,]+)(?:,\s*(.*))?$/.exec(line);
  if (!m) return { name: line };
  return { quantity: m[2] ? m[1] : Number(m[1]), ...(m[2] && { unit: m[2] }), name: m[3], ...(m[4] && { preparation: m[4] }) };
}

/**
 * The ways models write one and the same answer, as seen from chat models that were given the schema but not held
 * to it (written by hand after their habits): each gives the same recipe once normalised.
 */
export const ANSWER_STYLES = {
  /** What the strict schema asks for. */
  strict: (r: StyleRecipe) => JSON.stringify({ isRecipe: true, notRecipeReason: null, recipes: [r] }),
  /** The wrapper as it was before several recipes per post: one `recipe`. */
  oneRecipe: (r: StyleRecipe) => JSON.stringify({ isRecipe: true, notRecipeReason: null, recipe: r }),
  /** In a Markdown fence, after a sentence and before another (Llama, Mistral, Gemma in json_object-less servers). */
  prose: (r: StyleRecipe) =>
    `Here is the recipe extracted from the post:\n\n\`\`\`json\n${JSON.stringify({ isRecipe: true, notRecipeReason: null, recipe: r }, null, 2)}\n\`\`\`\n\nLet me know if you want it in another format!`,
  /** A reasoning model's thoughts first (DeepSeek-R1, Qwen3), braces and all. */
  think: (r: StyleRecipe) =>
    `<think>\nThe user wants JSON like {"isRecipe": ...}. The post lists ingredients and steps, so it is a recipe.\n</think>\n\n${JSON.stringify({ isRecipe: true, notRecipeReason: null, recipe: r })}`,
  /** A bare schema.org Recipe, HowToStep objects, strings where the schema has lists. */
  schemaOrg: (r: StyleRecipe) =>
    JSON.stringify({
      '@context': 'https://schema.org',
      '@type': 'Recipe',
      name: r.name,
      recipeYield: r.recipeYield,
      prepTime: r.prepTime,
      cookTime: r.cookTime,
      recipeIngredient: r.recipeIngredient,
      recipeInstructions: r.recipeInstructions.map((text) => ({ '@type': 'HowToStep', text })),
      recipeCategory: r.recipeCategory.join(', '),
      recipeCuisine: r.recipeCuisine,
      keywords: r.keywords.join(', '),
    }),
  /** The wrapper without isRecipe and notRecipeReason. */
  noFlag: (r: StyleRecipe) => JSON.stringify({ recipe: r }),
  /** Plain keys, durations as words and numbers, ingredient objects, numbered steps. */
  plain: (r: StyleRecipe) =>
    JSON.stringify({
      title: r.name,
      servings: r.recipeYield,
      prep_time: `${minutes(r.prepTime)} minutes`,
      cook_time: minutes(r.cookTime),
      ingredients: r.recipeIngredient.map(ingredientObject),
      steps: r.recipeInstructions.map((s, i) => `${i + 1}. ${s}`),
      category: r.recipeCategory,
      cuisine: r.recipeCuisine,
      tags: r.keywords,
    }),
  /** isRecipe as a string, numbered step objects, and keys nobody asked for. */
  extraKeys: (r: StyleRecipe) =>
    JSON.stringify({
      isRecipe: 'true',
      notRecipeReason: '',
      confidence: 0.93,
      recipe: {
        ...r,
        recipeInstructions: r.recipeInstructions.map((text, i) => ({ step: i + 1, text })),
        notes: 'Use fresh lemons.',
        nutrition: { calories: '520 kcal' },
        author: { '@type': 'Person', name: 'the poster' },
      },
    }),
  /** A list holding the answer. */
  list: (r: StyleRecipe) => JSON.stringify([{ isRecipe: true, notRecipeReason: null, recipe: r }]),
} satisfies Record<string, (r: StyleRecipe) => string>;
export type AnswerStyle = keyof typeof ANSWER_STYLES;

/**
 * A scripted answer to a create: a status and body, a hang-up, or `create` (created as usual, for the answers after
 * it; `answerAfterMs`: stored at once, answered that much later).
 */
export type ManagerAnswer = { status: number; body: unknown } | { kind: 'hang-up' } | { kind: 'create'; answerAfterMs?: number };

export interface CreatedRecipe {
  id: string;
  /** Mealie: the schema.org JSON inside `data`; Tandoor: the request body. */
  recipe: Record<string, unknown>;
  raw: Record<string, unknown>;
  /** Mealie: the recipe's settings, and the ingredients a `PATCH /api/recipes/{slug}` set. */
  settings?: Record<string, unknown>;
  ingredients?: Record<string, unknown>[];
  /** Mealie: the recipe's notes (`[{title, text}]`) a PATCH set. */
  notes?: { title: string; text: string }[];
}

/** A new Mealie recipe's settings (Mealie's defaults: amounts off, so ingredients show as notes). */
const MEALIE_SETTINGS = { public: true, showNutrition: false, showAssets: false, landscapeView: false, disableComments: true, disableAmount: true, locked: false };

export class FakeRecipeManager {
  url = '';
  token = 'manager-token-0123456789';
  readonly created: CreatedRecipe[] = [];
  /** Every create request, answered or not. */
  readonly createRequests: { at: number; authorization: string | undefined }[] = [];
  readonly pictures: { id: string; contentType: string; bytes: number; hasImageField: boolean }[] = [];
  /** Answers for the next create requests, in order; then 201. */
  readonly script: ManagerAnswer[] = [];
  /** A create is stored at once but answered this much later (a manager slow to answer, a caller that dies). */
  answerCreatesAfterMs = 0;
  /** Foods, units and Mealie's ingredient parser (fakes/manager-foods.ts). */
  readonly foods: FakeFoods;
  /** Every `PATCH /api/recipes/{slug}` (Mealie), answered or not. */
  readonly patches: { id: string; body: Record<string, unknown> }[] = [];
  /** Answers for the next PATCH requests, in order; then the real answer. */
  readonly patchScript: { status: number; body: unknown }[] = [];
  private nextId = 1;
  private server: http.Server | undefined;

  private constructor(readonly kind: 'mealie' | 'tandoor') {
    this.foods = new FakeFoods(kind);
  }

  static async start(kind: 'mealie' | 'tandoor'): Promise<FakeRecipeManager> {
    const s = new FakeRecipeManager(kind);
    s.server = http.createServer((req, res) => void s.serve(req, res));
    s.url = await listen(s.server);
    return s;
  }

  reset(): void {
    this.created.length = 0;
    this.createRequests.length = 0;
    this.pictures.length = 0;
    this.script.length = 0;
    this.answerCreatesAfterMs = 0;
    this.patches.length = 0;
    this.patchScript.length = 0;
    this.foods.reset();
  }

  /** A food or unit named by id in a Tandoor recipe that Tandoor does not have: `food` or `unit`. */
  private unknownTandoorObject(steps: { ingredients?: { food?: { id?: unknown } | null; unit?: { id?: unknown } | null }[] }[]): 'food' | 'unit' | undefined {
    for (const i of steps.flatMap((s) => s.ingredients ?? [])) {
      if (i.food?.id !== undefined && !this.foods.has('food', i.food.id)) return 'food';
      if (i.unit?.id !== undefined && !this.foods.has('unit', i.unit.id)) return 'unit';
    }
    return undefined;
  }

  private find(id: string): CreatedRecipe | undefined {
    return this.created.find((c) => c.id === id);
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const body = await readBody(req);
    const authorized = req.headers.authorization === `Bearer ${this.token}`;
    const p = req.url ?? '';
    const create = this.kind === 'mealie' ? p === '/api/recipes/create/html-or-json' : p === '/api/recipe/';
    if (req.method === 'POST' && create) {
      this.createRequests.push({ at: Date.now(), authorization: req.headers.authorization });
      if (!authorized) return send(401, { detail: 'Not authenticated' });
      const answer = this.script.shift();
      if (answer && 'kind' in answer && answer.kind === 'hang-up') {
        res.destroy();
        return;
      }
      if (answer && 'status' in answer) return send(answer.status, answer.body);
      const answerAfterMs = (answer && 'answerAfterMs' in answer ? answer.answerAfterMs : undefined) ?? this.answerCreatesAfterMs;
      const raw = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (this.kind === 'mealie') {
        const recipe = JSON.parse(String(raw.data)) as Record<string, unknown>;
        if (!recipe.name) return send(400, { detail: { message: 'Unable to parse recipe', error: true, details: 'BAD_RECIPE_DATA' } });
        let slug = String(recipe.name).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
        const taken = this.created.filter((c) => c.id === slug || c.id.startsWith(`${slug}-`)).length;
        if (taken) slug = `${slug}-${taken}`;
        this.created.push({ id: slug, recipe, raw });
        if (answerAfterMs) await sleep(answerAfterMs);
        return send(201, slug);
      }
      if (!raw.name || !Array.isArray(raw.steps)) return send(400, { name: ['This field is required.'] });
      const unknown = this.unknownTandoorObject(raw.steps as { ingredients?: { food?: { id?: unknown } | null; unit?: { id?: unknown } | null }[] }[]);
      if (unknown) return send(400, { steps: [{ ingredients: [{ [unknown]: ['Invalid pk - object does not exist.'] }] }] });
      const id = String(this.nextId++);
      this.created.push({ id, recipe: raw, raw });
      if (answerAfterMs) await sleep(answerAfterMs);
      return send(201, { id: Number(id), ...raw });
    }
    if (!create && (p.startsWith('/api/food') || p.startsWith('/api/unit') || p.startsWith('/api/parser/'))) {
      if (!authorized) return send(401, { detail: 'Not authenticated' });
      const answer = this.foods.handle(req.method ?? 'GET', new URL(p, 'http://x'), body);
      if (answer) return send(answer.status, answer.body);
    }
    const patch = this.kind === 'mealie' && req.method === 'PATCH' ? /^\/api\/recipes\/([^/?]+)$/.exec(p) : null;
    if (patch) {
      if (!authorized) return send(401, { detail: 'Not authenticated' });
      const c = this.find(decodeURIComponent(patch[1]!));
      if (!c) return send(404, { detail: { message: 'Recipe not found', error: true } });
      const data = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      this.patches.push({ id: c.id, body: data });
      const scripted = this.patchScript.shift();
      if (scripted) return send(scripted.status, scripted.body);
      const ingredients = (data.recipeIngredient ?? []) as Record<string, unknown>[];
      // Mealie stores the ingredient's food and unit by id: one it does not have cannot be saved.
      const bad = ingredients.find((i) => (i.food && !this.foods.has('food', (i.food as { id?: unknown }).id)) || (i.unit && !this.foods.has('unit', (i.unit as { id?: unknown }).id)));
      if (bad) return send(500, { detail: 'Internal Server Error' });
      if (data.recipeIngredient) c.ingredients = ingredients;
      if (data.settings) c.settings = data.settings as Record<string, unknown>;
      if (data.notes) c.notes = data.notes as CreatedRecipe['notes'];
      return send(200, { slug: c.id, name: c.recipe.name, recipeIngredient: c.ingredients, settings: c.settings ?? MEALIE_SETTINGS });
    }
    if (req.method === 'GET') {
      if (!authorized) return send(401, { detail: 'Not authenticated' });
      const u = new URL(p, 'http://x');
      const term = (u.searchParams.get(this.kind === 'mealie' ? 'search' : 'query') ?? '').toLowerCase();
      const matches = this.created.filter((c) => String(c.recipe.name ?? '').toLowerCase().includes(term));
      if (this.kind === 'mealie' && u.pathname === '/api/recipes') {
        return send(200, { page: 1, perPage: 50, total: matches.length, items: matches.map((c) => ({ slug: c.id, name: c.recipe.name })) });
      }
      if (this.kind === 'tandoor' && u.pathname === '/api/recipe/') {
        return send(200, { count: matches.length, results: matches.map((c) => ({ id: Number(c.id), name: c.recipe.name })) });
      }
      const one = this.kind === 'mealie' ? /^\/api\/recipes\/([^/]+)$/.exec(u.pathname) : /^\/api\/recipe\/([^/]+)\/$/.exec(u.pathname);
      const c = one && this.find(decodeURIComponent(one[1]!));
      if (c && this.kind === 'mealie') {
        const notes = ((c.recipe.recipeIngredient ?? []) as string[]).map((note) => ({ quantity: null, unit: null, food: null, note, disableAmount: true, originalText: note }));
        return send(200, { slug: c.id, name: c.recipe.name, orgURL: c.recipe.url ?? null, settings: c.settings ?? MEALIE_SETTINGS, recipeIngredient: c.ingredients ?? notes, notes: c.notes ?? [] });
      }
      if (c) return send(200, { id: Number(c.id), name: c.recipe.name, source_url: c.recipe.source_url ?? '' });
    }
    const image = this.kind === 'mealie' ? /^\/api\/recipes\/([^/]+)\/image$/.exec(p) : /^\/api\/recipe\/([^/]+)\/image\/$/.exec(p);
    if (req.method === 'PUT' && image) {
      if (!authorized) return send(401, { detail: 'Not authenticated' });
      this.pictures.push({
        id: decodeURIComponent(image[1]!),
        contentType: String(req.headers['content-type']),
        bytes: body.length,
        hasImageField: body.includes('name="image"'),
      });
      return send(200, { image: 'ok' });
    }
    send(404, { detail: 'Not Found' });
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

export interface FakeYtDlpPost {
  info?: Record<string, unknown>;
  error?: string;
  sleepMs?: number;
  media?: string;
  video?: string;
  vtt?: string;
  /** Downloads fail with this (a video made private or removed since its metadata was read). */
  downloadError?: string;
}

/**
 * A stand-in yt-dlp: `-J` answers for registered URLs (a site extractor's metadata), "Unsupported URL" otherwise;
 * a registered post's captions (`--write-subs`: its info JSON and caption file) and downloads (`-f ... -o`: the
 * file it was given), as transcription and the recipe queue's frames ask for them.
 */
export class FakeYtDlp {
  private constructor(
    readonly dir: string,
    readonly path: string,
  ) {}

  static async create(): Promise<FakeYtDlp> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-ytdlp-'));
    const file = path.join(dir, 'yt-dlp');
    await fs.writeFile(
      file,
      `#!${process.execPath}
const fs = require('fs');
const path = require('path');
const args = process.argv.slice(2);
if (args.includes('--version')) { console.log('2099.01.01 (fake)'); process.exit(0); }
fs.appendFileSync(path.join(__dirname, 'calls.jsonl'), JSON.stringify(args) + '\\n');
const url = args[args.length - 1];
let posts = {};
try { posts = JSON.parse(fs.readFileSync(path.join(__dirname, 'posts.json'), 'utf8')); } catch {}
const entry = posts[url];
if (!entry) { process.stderr.write('ERROR: Unsupported URL: ' + url + '\\n'); process.exit(1); }
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
setTimeout(() => {
  if (entry.error) { process.stderr.write('ERROR: ' + entry.error + '\\n'); process.exit(1); }
  if (args.includes('-J')) { process.stdout.write(JSON.stringify(entry.info)); return; }
  if (args.includes('--write-subs')) {
    // Captions: the metadata, and the caption file when the post has one.
    fs.writeFileSync('captions.info.json', JSON.stringify(entry.info || {}));
    if (entry.vtt) fs.writeFileSync('captions.en.vtt', entry.vtt);
    return;
  }
  if (entry.downloadError) { process.stderr.write('ERROR: ' + entry.downloadError + '\\n'); process.exit(1); }
  const format = opt('-f') || '';
  const file = format.startsWith('bestaudio') ? entry.media : (entry.video || entry.media);
  if (!file) { process.stderr.write('ERROR: [generic] No video formats found\\n'); process.exit(1); }
  const out = (opt('-o') || 'media.%(ext)s').replace('%(ext)s', path.extname(file).slice(1));
  fs.copyFileSync(file, out);
  if (args.includes('--print')) console.log(path.resolve(out));
}, entry.sleepMs || 0);
`,
      { mode: 0o755 },
    );
    await fs.writeFile(path.join(dir, 'posts.json'), '{}');
    return new FakeYtDlp(dir, file);
  }

  /**
   * The posts it knows, by URL: `info` is the `-J` metadata; `media` (a file) what a download of its audio gets and
   * `video` (a file) what a download of its video gets (else `media`); `vtt` its captions (else none).
   */
  async set(posts: Record<string, FakeYtDlpPost>): Promise<void> {
    await fs.writeFile(path.join(this.dir, 'posts.json'), JSON.stringify(posts));
  }

  /** The argument lists it was run with (`--version` probes excluded). */
  async calls(): Promise<string[][]> {
    const text = await fs.readFile(path.join(this.dir, 'calls.jsonl'), 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
  }

  async remove(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}

/** A post whose caption is a recipe the fake model reads: "- " lines are ingredients, numbered lines steps. */
export function recipeCaption(name: string): string {
  return `${name}! Ready in 20 minutes.\n- 200 g spaghetti\n- 1 lemon, zested\n- 30 g butter\n1. Boil the pasta.\n2. Toss it with butter and lemon.`;
}
