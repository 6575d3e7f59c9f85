import type { QueueName } from '../../core/config.js';
import { json, type Json } from './http.js';
import { FakePushService } from '../../fakes/push-service.js';
import { FakeLlm, FakeRecipeManager, FakeSocialSite, FakeYtDlp } from '../../fakes/recipe-fakes.js';
import { startTestStack, type TestStack } from './stack.js';
import { until } from './until.js';

/** The API and recipe workers of one test file, with every third party faked on 127.0.0.1. */
export interface RecipeHarness {
  stack: TestStack;
  site: FakeSocialSite;
  llm: FakeLlm;
  manager: FakeRecipeManager;
  push: FakePushService;
  ytdlp: FakeYtDlp;
  url: string;
  stop(): Promise<void>;
}

export const LLM_KEY = 'sk-test-llm-key-0123456789';

export async function startRecipeHarness(
  o: { env?: Record<string, string>; manager?: 'mealie' | 'tandoor'; realYtDlp?: boolean; queues?: QueueName[] } = {},
): Promise<RecipeHarness> {
  const [site, llm, manager, push, ytdlp] = await Promise.all([
    FakeSocialSite.start(),
    FakeLlm.start(),
    FakeRecipeManager.start(o.manager ?? 'mealie'),
    FakePushService.start(),
    FakeYtDlp.create(),
  ]);
  const stack = await startTestStack({
    queues: o.queues ?? ['recipes'],
    env: { ...recipeEnv({ llm, manager, ytdlp }, o), PUSH_CA_FILE: push.caFile, ...o.env },
  });
  return {
    stack,
    site,
    llm,
    manager,
    push,
    ytdlp,
    url: stack.url,
    stop: async () => {
      await stack.stop();
      await Promise.allSettled([site.close(), llm.close(), manager.close(), push.close(), ytdlp.remove()]);
    },
  };
}

/** The configuration that points the recipe queue at the fakes (the model, the recipe manager, yt-dlp). */
export function recipeEnv(
  f: Pick<RecipeHarness, 'llm' | 'manager' | 'ytdlp'>,
  o: { manager?: 'mealie' | 'tandoor'; realYtDlp?: boolean } = {},
): Record<string, string> {
  return {
    LLM_API_BASE_URL: f.llm.baseUrl,
    LLM_API_KEY: LLM_KEY,
    LLM_MODEL: 'fake-model',
    RECIPE_MANAGER: o.manager ?? 'mealie',
    RECIPE_MANAGER_BASE_URL: f.manager.url,
    RECIPE_MANAGER_TOKEN: f.manager.token,
    QUEUE_CONCURRENCY: '2',
    QUEUE_TIMEOUT_MS: '3000',
    QUEUE_RETRY_ATTEMPTS: '3',
    QUEUE_RETRY_BACKOFF_MS: '20',
    QUEUE_EXTRACT_WAIT_MS: '15000',
    ...(!o.realYtDlp && { YTDLP_PATH: f.ytdlp.path }),
  };
}

export async function enqueue(base: string, url: string): Promise<{ status: number; body: Json; location: string | null }> {
  const res = await fetch(`${base}/api/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  return { status: res.status, body: await json(res), location: res.headers.get('location') };
}

export async function getItem(base: string, id: string): Promise<Json> {
  return json(await fetch(`${base}/api/queue/${id}`));
}

export const isFinished = (item: Json) => ['success', 'error', 'unhealthy'].includes(item.status);

/** Polls GET /api/queue/:id until `pred` holds. */
export async function waitForItem(base: string, id: string, pred: (item: Json) => boolean = isFinished, timeoutMs = 30_000): Promise<Json> {
  return until(() => getItem(base, id), pred, { timeoutMs, intervalMs: 50, what: `item ${id}` });
}

/** The `queue-update` events of a stream as stored (seq order): what every client of that stream is sent. */
export async function storedUpdates(stack: TestStack, stream: string): Promise<{ seq: number; data: Json }[]> {
  const rows: { seq: string; data: Json }[] = await stack.orm.em
    .fork()
    .execute(`select seq, data from job_event where stream = ? and event = 'queue-update' order by seq`, [stream]);
  return rows.map((r) => ({ seq: Number(r.seq), data: r.data }));
}

export { recipeCaption } from '../../fakes/recipe-fakes.js';
