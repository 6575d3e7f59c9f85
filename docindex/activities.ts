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
import { alive, type Progress, withProgress } from '../activities/heartbeat.js';

/** What a stage of docindex/pipeline.ts is given of its activity's heartbeats. */
const stepContext = (p: Progress): StepContext => ({ heartbeat: (d) => p.moved(d), signal: p.signal, attempt: p.attempt, resumeFrom: p.resumeFrom });

/** The indexing stages as activities; the logic lives in docindex/pipeline.ts. */
export function createIndexingActivities(deps: ActivityDeps) {
  return {
    // Heartbeats carry the crawl's progress (git's, then files parsed); one that stops moving is retried elsewhere.
    crawlAndParse: (input: IndexStep) =>
      withProgress((p) => crawlAndParse(deps, input, stepContext(p))),
    replaceSnippets: (input: IndexStep, crawl: CrawlResult) => alive(() => replaceSnippets(deps, input, crawl)),
    embedSnippets: (input: IndexStep) => alive((p) => embedSnippets(deps, input, stepContext(p))),
    updateStatistics: (input: IndexStep, crawl: CrawlResult) => alive(() => updateStatistics(deps, input, crawl)),
    // A crawl that changed nothing: the three stages above in one activity (docindex/workflow.ts). Each is safe to
    // repeat, so the whole is; the embedding stage still runs, for a provider activated since the last index.
    finishUnchanged: (input: IndexStep, crawl: CrawlResult) =>
      alive(async (p) => {
        const written = await replaceSnippets(deps, input, crawl);
        const embedded = await embedSnippets(deps, input, stepContext(p));
        // Nothing changed but what the embedding stage may have added: the search stamp moves only then.
        const stats = await updateStatistics(deps, input, crawl, embedded.embedded > 0);
        return { ...written, ...embedded, ...stats };
      }),
  };
}
export type IndexingActivities = ReturnType<typeof createIndexingActivities>;
