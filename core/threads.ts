import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module next to `caller` (pass `import.meta.url`), by its name without extension. The
 * compiled build runs the `.js` file; from TypeScript (tsx, vitest) the thread registers tsx before importing the
 * `.ts` file, since a worker does not inherit the parent's loader hooks.
 */
export function startThread(caller: string, name: string, workerData: unknown): Worker {
  const ts = fileURLToPath(caller).endsWith('.ts');
  const entry = new URL(`./${name}.${ts ? 'ts' : 'js'}`, caller);
  if (!ts) return new Worker(entry, { workerData });
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`, {
    eval: true,
    workerData,
  });
}

/**
 * Calls to a thread that answers each request by its id (`{ id, ...request }` in; `{ id, error }` or
 * `{ id, ...answer }` out). The thread starts on first use and is unreferenced while no call waits, so it never keeps
 * a process alive; when it stops, every waiting call fails with `stopped(err)` and the next call starts a new one.
 * Messages without an id (progress, say) go to `onOther`.
 */
export class ThreadCalls<Request extends object, Reply extends { id: number }, Answer> {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly o: {
      start: () => Worker;
      /** The answer a reply that is no error carries. */
      answer: (reply: Exclude<Reply, { error: string }>) => Answer;
      /** The error a thread's `error` message stands for. */
      explain: (message: string) => Error;
      /** The error of a call whose thread stopped. */
      stopped: (err: Error) => Error;
      onOther?: (message: unknown) => void;
    },
  ) {}

  /** Whether the thread is running. */
  get started(): boolean {
    return this.worker !== undefined;
  }

  call(request: Request): Promise<Answer> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref(); // busy: keep the process alive until the answer comes
      worker.postMessage({ id, ...request });
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = this.o.start();
    worker.on('message', (message: Reply | { id?: undefined }) => {
      if (message.id === undefined) return this.o.onOther?.(message);
      const p = this.pending.get(message.id);
      if (!p) return;
      this.pending.delete(message.id);
      if (!this.pending.size) worker.unref(); // idle: it must not keep the process alive
      const error = (message as { error?: unknown }).error;
      if (typeof error === 'string') p.reject(this.o.explain(error));
      else p.resolve(this.o.answer(message as Exclude<Reply, { error: string }>));
    });
    const fail = (err: Error) => {
      for (const p of this.pending.values()) p.reject(this.o.stopped(err));
      this.pending.clear();
      this.worker = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => code !== 0 && fail(new Error(`exit code ${code}`)));
    worker.unref();
    return (this.worker = worker);
  }
}
