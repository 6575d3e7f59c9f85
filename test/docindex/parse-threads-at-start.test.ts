import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePool } from '../../docindex/parse/pool.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

let stack: TestStack;

beforeAll(async () => {
  expect(parsePool().running).toBe(0);
  stack = await startTestStack({ queues: ['indexing'] });
});
afterAll(() => stack?.stop());

describe('an indexing worker', () => {
  // docindex/module.ts: the threads load while the worker starts, so its first job does not wait for them.
  it('starts its parse threads before any job', async () => {
    await until(async () => parsePool().running, (n) => n === parsePool().size, { timeoutMs: 30_000, what: 'the parse threads' });
  });
});
