import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ThreadCalls } from '../../core/threads.js';

/**
 * ThreadCalls (core/threads.ts), the plumbing of the local embedding and rerank threads, against a real thread:
 * replies matched by id, a thread's error explained, a thread that dies failing its callers and replaced on the
 * next call, and messages without an id passed aside.
 */
const CODE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (req) => {
  if (req.op === 'progress') parentPort.postMessage({ progress: req.n }); // then its answer, below
  if (req.op === 'die') process.exit(3);
  if (req.op === 'fail') return parentPort.postMessage({ id: req.id, error: 'no model here' });
  // Later requests may be answered first: replies go by id, not by order.
  setTimeout(() => parentPort.postMessage({ id: req.id, doubled: req.n * 2 }), req.wait ?? 0);
});`;

type Request = { op: 'double' | 'fail' | 'die' | 'progress'; n?: number; wait?: number };
type Reply = { id: number; doubled: number } | { id: number; error: string };

function calls(other: unknown[] = []) {
  let starts = 0;
  const thread = new ThreadCalls<Request, Reply, number>({
    start: () => (starts++, new Worker(CODE, { eval: true })),
    answer: (reply) => reply.doubled,
    explain: (message) => new Error(`explained: ${message}`),
    stopped: (err) => new Error(`stopped: ${err.message}`),
    onOther: (message) => other.push(message),
  });
  return { thread, starts: () => starts };
}

describe('calls to a thread', () => {
  it('match replies to requests by id, start the thread once, and pass messages without an id aside', async () => {
    const other: unknown[] = [];
    const { thread, starts } = calls(other);
    expect(thread.started).toBe(false);
    const slow = thread.call({ op: 'double', n: 1, wait: 100 });
    const fast = thread.call({ op: 'double', n: 2 });
    const progress = thread.call({ op: 'progress', n: 7 });
    expect(await Promise.all([slow, fast, progress])).toEqual([2, 4, 14]);
    expect(other).toEqual([{ progress: 7 }]);
    expect(starts()).toBe(1);
    await thread.close();
    expect(thread.started).toBe(false);
  });

  it("explain a thread's error, and fail the calls of a thread that stopped, starting a new one next time", async () => {
    const { thread, starts } = calls();
    await expect(thread.call({ op: 'fail' })).rejects.toThrow('explained: no model here');
    const waiting = thread.call({ op: 'double', n: 5, wait: 5000 });
    await expect(thread.call({ op: 'die' })).rejects.toThrow('stopped: exit code 3');
    await expect(waiting).rejects.toThrow('stopped: exit code 3');
    expect(await thread.call({ op: 'double', n: 21 })).toBe(42);
    expect(starts()).toBe(2);
    await thread.close();
  });
});
