import {
  crawlAndParse,
  type CrawlResult,
  embedSnippets,
  endedByThisRun,
  type IndexStep,
  NOTHING_WRITTEN,
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
    // repeat, so the whole is; the embedding stage still runs, for a provider activated since the last index. With
    // `endsJob` it records the job done as well, so the workflow's own finish is not needed.
    finishUnchanged: (input: IndexStep, crawl: CrawlResult, opts: { endsJob?: boolean } = {}) =>
      alive(async (p) => {
        // Only a repeated attempt can find its job already ended, by an attempt before it.
        const ended = opts.endsJob && p.attempt > 1 ? await endedByThisRun(deps, input) : undefined;
        if (ended) return { ...NOTHING_WRITTEN, embedded: 0, provider: null, ...ended };
        const written = await replaceSnippets(deps, input, crawl);
        const embedded = await embedSnippets(deps, input, stepContext(p));
        // Nothing changed but what the embedding stage may have added: the search stamp moves only then.
        const stats = await updateStatistics(deps, input, crawl, { searchChanged: embedded.embedded > 0, endsJob: opts.endsJob });
        return { ...written, ...embedded, ...stats };
      }),
  };
}
export type IndexingActivities = ReturnType<typeof createIndexingActivities>;
