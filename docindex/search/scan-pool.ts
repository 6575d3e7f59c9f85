import type { Worker } from 'node:worker_threads';
import { startThread } from '../../core/threads.js';
import type { Layout, ScanQuery, Top } from './scan.js';

export interface ScanRequest {
  id: number;
  matrix: number;
  memory: WebAssembly.Memory;
  layout: Layout;
  slot: number;
  /** A batch: scanned together in one pass over the rows. */
  queries: ScanQuery[];
  start: number;
  end: number;
}
/** Each query's best rows, in the request's order. */
export type ScanReply = { id: number; tops: Top[] } | { id: number; error: string };

interface Pending {
  resolve(tops: Top[]): void;
  reject(err: Error): void;
}

/**
 * Scan threads (SEARCH_THREADS): thread i always uses scratch slot i of a matrix, and handles its messages one at a
 * time, so concurrent queries queue per thread and never share scratch space. Threads start on first use and are
 * unreferenced while idle, so they never keep a process alive.
 */
export class ScanPool {
  private readonly threads: (Worker | undefined)[];
  private readonly pending = new Map<number, Pending & { thread: number }>();
  private nextId = 1;

  constructor(readonly size: number) {
    this.threads = new Array<Worker | undefined>(size).fill(undefined);
  }

  /** Scans rows [start, end) of a matrix for a batch of queries on thread `index`. */
  scan(index: number, req: Omit<ScanRequest, 'id' | 'slot'>): Promise<Top[]> {
    const id = this.nextId++;
    const thread = this.thread(index);
    thread.ref();
    return new Promise<Top[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, thread: index });
      thread.postMessage({ ...req, id, slot: index } satisfies ScanRequest);
    });
  }

  /** Lets the threads drop their handle on an evicted matrix. */
  forget(matrix: number): void {
    for (const t of this.threads) t?.postMessage({ forget: matrix });
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t?.terminate()));
    this.threads.fill(undefined);
  }

  private thread(index: number): Worker {
    const existing = this.threads[index];
    if (existing) return existing;
    const worker = startThread(import.meta.url, 'scan-thread', null);
    worker.on('message', (reply: ScanReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (![...this.pending.values()].some((q) => q.thread === index)) worker.unref();
      if ('error' in reply) p.reject(new Error(`vector scan failed: ${reply.error}`));
      else p.resolve(reply.tops);
    });
    const fail = (err: Error) => {
      for (const [id, p] of this.pending) {
        if (p.thread !== index) continue;
        this.pending.delete(id);
        p.reject(new Error(`a vector scan thread stopped: ${err.message}`));
      }
      if (this.threads[index] === worker) this.threads[index] = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    worker.unref();
    this.threads[index] = worker;
    return worker;
  }
}
