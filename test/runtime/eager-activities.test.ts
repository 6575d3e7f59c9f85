import { describe, expect, inject, it } from 'vitest';
import { activityWorkers } from '../support/eager-dispatch.js';

describe('the Temporal dev server that `npm start` and the tests run', () => {
  // runtime/temporal.ts turns on eager activity dispatch: an activity a workflow task schedules on its own queue comes
  // back with that task's completion to the worker that ran it, without a round trip through the queue.
  it.skipIf(process.env.TEMPORAL_ADDRESS)('hands a workflow’s activities straight to the worker that scheduled them', async () => {
    expect(await activityWorkers(inject('temporalAddress'), 16)).toEqual(Array(16).fill('the scheduling worker'));
  }, 60_000);
});
