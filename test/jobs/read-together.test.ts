import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../db/entities/job.js';
import { readTogether } from '../../jobs/read-together.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [] });
});
afterAll(() => stack?.stop());

async function newJob(): Promise<string> {
  const id = randomUUID();
  await stack.orm.em.fork().insert(Job, { id, kind: 'transcription', workflowId: `wf-${id}`, status: 'processing', createdAt: new Date(), updatedAt: new Date() });
  return id;
}
/** A completion committed by another connection between two reads. */
const finish = (id: string) => stack.orm.em.fork().nativeUpdate(Job, { id }, { status: 'done' });
/** Read again from the database each time, as a service's separate queries do. */
const status = async (em: EntityManager, id: string) => (await em.findOneOrFail(Job, { id }, { refresh: true })).status;

describe('reading a job with its rows', () => {
  it('sees one moment: a change committed between two reads is not seen by the second', async () => {
    const id = await newJob();
    const seen = await readTogether(stack.orm.em.fork(), async (tx) => {
      const before = await status(tx, id);
      await finish(id);
      return [before, await status(tx, id)];
    });
    expect(seen).toEqual(['processing', 'processing']);
    expect(await status(stack.orm.em.fork(), id)).toBe('done');
  });

  it('is what separate reads are not: without it the second read sees the change (the skew it prevents)', async () => {
    const id = await newJob();
    const em = stack.orm.em.fork();
    const before = await status(em, id);
    await finish(id);
    expect([before, await status(em, id)]).toEqual(['processing', 'done']);
  });

  it('writes nothing: a write inside it is refused', async () => {
    const id = await newJob();
    await expect(readTogether(stack.orm.em.fork(), (tx) => tx.nativeUpdate(Job, { id }, { status: 'failed' }))).rejects.toThrow(/read-only/);
    expect(await status(stack.orm.em.fork(), id)).toBe('processing');
  });
});
