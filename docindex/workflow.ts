import { patched, workflowInfo } from '@temporalio/workflow';
import type { IndexingActivities } from './activities.js';
import type { IndexInput } from './pipeline.js';
import { proxyJobActivities } from '../workflows/activities.js';
import { runJob } from '../workflows/job-lifecycle.js';
import { externalCallRetry, JOB_ACTIVITY_RETRY } from '../workflows/retry-policy.js';

/**
 * Indexes a library's default branch (versionId null) or one version. Workflow id `index:<library>[@<tag>]`, so
 * there is one active job per key. The job waits `queued` for a slot of the `indexing` pool, whose size is the
 * indexing concurrency setting.
 */
export async function indexLibraryWorkflow(input: IndexInput) {
  // Every step heartbeats: a killed worker's attempt, or one whose result the Temporal server could not take (it
  // was down as the step ended), is retried once its heartbeats stop, not after its start-to-close timeout.
  const { crawlAndParse, embedSnippets, finishUnchanged } = proxyJobActivities<IndexingActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: externalCallRetry(3),
  });
  const { replaceSnippets, updateStatistics } = proxyJobActivities<IndexingActivities>({
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: JOB_ACTIVITY_RETRY,
  });
  // Every step names this run: only the job's owner writes to it (jobs/ownership.ts).
  const step = { ...input, runId: workflowInfo().runId };
  // The crawl takes the job itself, in the write of its first stage: an activity and a workflow task fewer before
  // work begins. Histories recorded before the patch start with `startJob`; index-crawl-starts-job.json and
  // index-unchanged-crawl-starts-job.json (test/fixtures/histories/) are of runs after it.
  const startsJob = patched('index-crawl-starts-job');
  let recorded = false;
  return runJob(
    input.jobId,
    async () => {
      // Each stage reports its own progress (stage, percentage, files) as it goes. The crawl writes the snippets as it
      // parses them, in a transaction it commits at its end (docindex/pipeline.ts, OpenSwap); the patch keeps
      // histories recorded before it on the old path, where the swap was its own step
      // (test/fixtures/histories/index-success-swap-step.json is one of them).
      const crawl = await crawlAndParse({ ...step, swapInCrawl: patched('index-swap-in-crawl'), startsJob }); // crawling, parsing, writing
      // A crawl that found no file changed or removed leaves little to do: the three stages run in one activity, as
      // the workflow's scheduling of each was most of a no-change re-index (bench/README.md, Index), and it records the
      // job done itself, an activity and a workflow task fewer. The patches keep histories recorded before them on
      // the old paths (test/fixtures/histories/index-unchanged.json was recorded between the two,
      // index-unchanged-ends-job.json after both).
      if (!crawl.changedFiles && !crawl.deletedFiles && patched('index-unchanged-one-activity')) {
        const endsJob = patched('index-unchanged-ends-job');
        const result = { ...crawl, ...(await finishUnchanged(step, crawl, { endsJob })) };
        recorded = endsJob;
        return result;
      }
      const { written: swapped, ...crawled } = crawl;
      const written = swapped ?? (await replaceSnippets(step, crawl)); // writing: one transaction
      const embedded = await embedSnippets(step); // embedding
      const stats = await updateStatistics(step, crawl); // statistics
      return { ...crawled, ...written, ...embedded, ...stats };
    },
    { slot: 'indexing', recorded: () => recorded, startedByPipeline: startsJob },
  );
}

// A library's refresh, started by its Temporal Schedule (docindex/refresh/).
export { refreshLibraryWorkflow } from './refresh/workflow.js';
