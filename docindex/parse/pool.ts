import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../core/threads.js';
import { withCodeWords, type IndexedSnippet } from './code-words.js';
import { parseFile } from './parse.js';

export interface ParseRequest {
  id: number;
  filePath: string;
  content: string;
}
export type ParseReply = { id: number; snippets: IndexedSnippet[] } | { id: number; error: string };

interface Pending {
  filePath: string;
  content: string;
  resolve(snippets: IndexedSnippet[]): void;
}

/**
 * parseFile on worker threads: each thread loads the tree-sitter grammars its files need once, and parses the files
 * it is sent one at a time; a file goes to the thread with the fewest waiting. Results are parseFile's own (it is
 * pure) with each snippet's code words (code-words.ts, for the keyword vectors), and each caller awaits its file's
 * promise, so the order stays the caller's. A thread that dies leaves its files to be parsed here, as parseFile
 * would have done. Threads start on first use (or `warm`) and are unreferenced while idle, so they never keep a process
 * alive.
 */
export class ParsePool {
  private readonly threads: (Worker | undefined)[];
  private readonly pending = new Map<number, Pending & { thread: number }>();
  private readonly load: number[];
  private nextId = 1;

  constructor(readonly size: number) {
    this.threads = new Array<Worker | undefined>(size).fill(undefined);
    this.load = new Array<number>(size).fill(0);
  }

  /** The snippets of one file, as parseFile gives them, each with its content's code words (code-words.ts). */
  parse(filePath: string, content: string): Promise<IndexedSnippet[]> {
    const index = this.load.indexOf(Math.min(...this.load));
    const id = this.nextId++;
    const thread = this.thread(index);
    thread.ref();
    this.load[index]!++;
    return new Promise<IndexedSnippet[]>((resolve) => {
      this.pending.set(id, { filePath, content, resolve, thread: index });
      thread.postMessage({ id, filePath, content } satisfies ParseRequest);
    });
  }

  /**
   * Starts every thread and has each parse a line, so that a worker's first job does not wait while the threads load
   * their modules (the tokenizer's ranks, the parsers; about 0.6 s of CPU a thread under tsx, bench/README.md "Index").
   */
  async warm(): Promise<void> {
    await Promise.all(this.threads.map(() => this.parse('warm-up.md', '# Warm-up\n')));
  }

  /** How many threads are running. */
  get running(): number {
    return this.threads.filter(Boolean).length;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t?.terminate()));
    this.threads.fill(undefined);
  }

  private settle(id: number, snippets?: IndexedSnippet[]): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (--this.load[p.thread]! === 0) this.threads[p.thread]?.unref();
    p.resolve(snippets ?? withCodeWords(parseFile(p.filePath, p.content)));
  }

  private thread(index: number): Worker {
    const existing = this.threads[index];
    if (existing) return existing;
    const worker = startThread(import.meta.url, 'pool-thread', null);
    worker.on('message', (reply: ParseReply) => this.settle(reply.id, 'snippets' in reply ? reply.snippets : undefined));
    const fail = () => {
      if (this.threads[index] === worker) this.threads[index] = undefined;
      for (const [id, p] of this.pending) if (p.thread === index) this.settle(id);
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    worker.unref();
    this.threads[index] = worker;
    return worker;
  }
}

let shared: ParsePool | undefined;

/** The process's parse pool: a thread per core, at most four (the crawl's reads and writes need the rest). */
export function parsePool(): ParsePool {
  shared ??= new ParsePool(Math.max(1, Math.min(4, os.availableParallelism())));
  return shared;
}
