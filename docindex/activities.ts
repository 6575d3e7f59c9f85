import { Context } from '@temporalio/activity';
import {
  crawlAndParse,
  type CrawlResult,
  embedSnippets,
  type IndexStep,
  replaceSnippets,
  type StepContext,
  updateStatistics,
} from './pipeline.js';
import type { ActivityDeps } from '../activities/deps.js';
import { withProgress } from '../activities/heartbeat.js';

/**
 * A step's liveness: a heartbeat every third of the timeout while this worker is alive, so a slow provider (which
 * has its own request timeouts and retries) or a long swap is not mistaken for a dead worker, and a killed worker, or
 * a result the Temporal server could not take, is noticed within the timeout.
 */
async function alive<T>(input: IndexStep, step: (ctx: StepContext) => Promise<T>): Promise<T> {
  const c = Context.current();
  let last: unknown;
  const timer = setInterval(() => c.heartbeat(last), Math.max(200, input.heartbeatTimeoutMs / 3));
  try {
    return await step({ heartbeat: (d) => c.heartbeat((last = d)), signal: c.cancellationSignal });
  } finally {
    clearInterval(timer);
  }
}

/** The indexing stages as activities; the logic lives in docindex/pipeline.ts. */
export function createIndexingActivities(deps: ActivityDeps) {
  return {
    // Heartbeats carry the crawl's progress (git's, then files parsed); one that stops moving is retried elsewhere.
    crawlAndParse: (input: IndexStep) =>
      withProgress((p) => crawlAndParse(deps, input, { heartbeat: (d) => p.moved(d), signal: p.signal, attempt: p.attempt, resumeFrom: p.resumeFrom })),
    replaceSnippets: (input: IndexStep, crawl: CrawlResult) => alive(input, () => replaceSnippets(deps, input, crawl)),
    embedSnippets: (input: IndexStep) => alive(input, (ctx) => embedSnippets(deps, input, ctx)),
    updateStatistics: (input: IndexStep, crawl: CrawlResult) => alive(input, () => updateStatistics(deps, input, crawl)),
    // A crawl that changed nothing: the three stages above in one activity (docindex/workflow.ts). Each is safe to
    // repeat, so the whole is; the embedding stage still runs, for a provider activated since the last index.
    finishUnchanged: (input: IndexStep, crawl: CrawlResult) =>
      alive(input, async (ctx) => {
        const written = await replaceSnippets(deps, input, crawl);
        const embedded = await embedSnippets(deps, input, ctx);
        const stats = await updateStatistics(deps, input, crawl);
        return { ...written, ...embedded, ...stats };
      }),
  };
}
export type IndexingActivities = ReturnType<typeof createIndexingActivities>;
