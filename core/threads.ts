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
