import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The modules a fresh process loads when it imports `entry` (and what startStack would need to run it), recorded by
 * module resolution hooks in that process.
 */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  const hooks = `
    let port;
    export function initialize(data) { port = data.port; }
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      port.postMessage(resolved.url);
      return resolved;
    }`;
  const script = `
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const loaded = new Set();
    port1.on('message', (url) => loaded.add(url));
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { port: port2 }, transferList: [port2] });
    await import(${JSON.stringify(entry)});
    await new Promise((r) => setTimeout(r, 200));
    port1.close();
    console.log(JSON.stringify([...loaded]));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, maxBuffer: 16 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as string[];
}

describe('an API process', () => {
  it('does not load what only workers use: the activities, their parsers and Temporal worker runtime', { timeout: 60_000 }, async () => {
    const api = await modulesLoadedBy('./runtime/stack.ts');
    expect(api.some((u) => u.includes('/runtime/services.ts')), 'the hooks saw the stack load').toBe(true);
    for (const workerOnly of ['/docindex/activities.ts', '/docindex/pipeline.ts', 'gpt-tokenizer', '@temporalio/worker/', '/runtime/worker.ts']) {
      expect(api.filter((u) => u.includes(workerOnly)), workerOnly).toEqual([]);
    }
    // The worker's entry point does load them: the check above would see them if they were there.
    const worker = await modulesLoadedBy('./runtime/worker.ts');
    expect(worker.some((u) => u.includes('@temporalio/worker/'))).toBe(true);
  });
});
