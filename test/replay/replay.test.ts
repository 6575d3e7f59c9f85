import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../../runtime/worker.js';
import { loadHistories } from './histories.js';

/**
 * Replay: every recorded history (test/fixtures/histories, made by `npm run record-histories`) is replayed against
 * the workflow code as it is now. A change that would make a running workflow take another path than its history
 * (a step added, removed or reordered, a timer changed) fails here, not on live workflows after a deploy.
 */
describe('recorded workflow histories', () => {
  it('replay against the current workflows without a nondeterminism error', { timeout: 180_000 }, async () => {
    const histories = await loadHistories();
    const bundle = await workflowBundle();
    const failures: string[] = [];
    const replayed: string[] = [];
    // Results come back in the order the histories went in (a retry's runs share their workflow id).
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: bundle, replayName: 'gristmill-replay' },
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      const name = histories[replayed.length]!.name;
      expect(result.workflowId).toBe(histories[replayed.length]!.workflowId);
      replayed.push(name);
      if (result.error) failures.push(`${name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed.sort()).toEqual(histories.map((h) => h.name).sort());
  });

  it('cover every workflow type and how each can end', async () => {
    const histories = await loadHistories();
    const types = new Set(histories.map((h) => h.workflowType));
    expect([...types].sort()).toEqual([
      'housekeepingWorkflow',
      'indexLibraryWorkflow',
      'pingWorkflow',
      'recipeWorkflow',
      'refreshLibraryWorkflow',
      'slotsWorkflow',
      'transcriptExtraWorkflow',
      'transcriptionWorkflow',
    ]);
    const ended = (h: (typeof histories)[number]) => {
      const last = h.history.events?.at(-1);
      if (last?.workflowExecutionCompletedEventAttributes) return 'completed';
      if (last?.workflowExecutionFailedEventAttributes) return 'failed';
      if (last?.workflowExecutionCanceledEventAttributes) return 'cancelled';
      if (last?.workflowExecutionContinuedAsNewEventAttributes) return 'continued-as-new';
      return 'running';
    };
    const endings = (type: string) => new Set(histories.filter((h) => h.workflowType === type).map(ended));
    for (const type of ['indexLibraryWorkflow', 'transcriptionWorkflow', 'recipeWorkflow', 'transcriptExtraWorkflow']) {
      expect([...endings(type)].sort(), type).toEqual(expect.arrayContaining(['cancelled', 'completed', 'failed']));
    }
    expect(endings('slotsWorkflow').has('continued-as-new')).toBe(true);
    // A retry is a second run of a job's workflow: its history starts from the same workflow id as an earlier one.
    expect(histories.filter((h) => h.name.endsWith('-retry')).map((h) => h.workflowType).sort()).toEqual(['recipeWorkflow', 'transcriptExtraWorkflow', 'transcriptionWorkflow']);
  });
});
