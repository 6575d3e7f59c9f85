import { describe, expect, it } from 'vitest';
import { databaseSchema, services, TASK_QUEUE_NAMES } from '../../runtime/services.js';
import { activitiesFor, WORKFLOW_MODULES } from '../../runtime/worker.js';
import type { ActivityDeps } from '../../activities/deps.js';
import { loadConfig } from '../../runtime/config.js';
import { createLogger } from '../../core/log.js';

/**
 * The services' declarations (runtime/services.ts) as the platform reads them: what a new service gets wrong when it
 * declares itself is caught here, not by a worker that silently lacks a workflow.
 */
describe('the services list', () => {
  it('bundles workflow modules whose exported names never collide (a re-export of two equal names would drop both)', async () => {
    const seen = new Map<string, string>();
    for (const file of WORKFLOW_MODULES) {
      const mod = (await import(file)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (typeof value !== 'function') continue;
        expect(seen.get(name), `${name} is exported by ${seen.get(name)} and ${file}`).toBeUndefined();
        seen.set(name, file);
      }
    }
    // Every workflow type a job is started with is among them.
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['pingWorkflow', 'slotsWorkflow', 'indexLibraryWorkflow', 'transcriptionWorkflow', 'recipeWorkflow']));
  });

  it('names each task queue, job kind and migration once', () => {
    expect(new Set(TASK_QUEUE_NAMES).size).toBe(TASK_QUEUE_NAMES.length);
    const kinds = services.flatMap((s) => (s.kinds ?? []).map((k) => k.name));
    expect(new Set(kinds).size).toBe(kinds.length);
    const names = databaseSchema.migrations.map((m) => m.name);
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives each queue the shared activities and its owner's, and refuses a queue no service declares", async () => {
    // Building the activities touches no connection: none is given.
    const deps: ActivityDeps = { config: loadConfig({}), log: createLogger('silent'), orm: null!, jobs: null!, temporal: null! };
    const names = async (queue: string) => Object.keys(await activitiesFor(queue, deps));
    expect(await names('transcription')).toEqual(expect.arrayContaining(['ping', 'requestSlot', 'transcriptionSubmit', 'sendPushNotification']));
    expect(await names('transcription')).not.toContain('recipeExtract');
    expect(await names('indexing')).toEqual(expect.arrayContaining(['ping', 'crawlAndParse']));
    expect(await names('indexing')).not.toContain('sendPushNotification');
    await expect(activitiesFor('nope', deps)).rejects.toThrow(/no service has a task queue named "nope"/);
  });
});
