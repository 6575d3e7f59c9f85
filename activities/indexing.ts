import { Context } from '@temporalio/activity';
import {
  crawlAndParse,
  type CrawlResult,
  embedSnippets,
  type IndexStep,
  replaceSnippets,
  type StepContext,
  updateStatistics,
} from '../docindex/pipeline.js';
import type { ActivityDeps } from './deps.js';

/**
 * Runs a long step with a heartbeat every third of the timeout while this worker is alive, so a slow clone or a
 * big parse is not mistaken for a dead worker, and a killed one is noticed within the timeout.
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
    crawlAndParse: (input: IndexStep) => alive(input, (ctx) => crawlAndParse(deps, input, ctx)),
    replaceSnippets: (input: IndexStep, crawl: CrawlResult) => replaceSnippets(deps, input, crawl),
    embedSnippets: (input: IndexStep) => alive(input, (ctx) => embedSnippets(deps, input, ctx)),
    updateStatistics: (input: IndexStep, crawl: CrawlResult) => updateStatistics(deps, input, crawl),
  };
}
export type IndexingActivities = ReturnType<typeof createIndexingActivities>;
