import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { transcriptionKind } from '../../transcription/kind.js';
import { SWEEP_GRACE_MS } from '../../transcription/sweep.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;
const log = createLogger('warn');

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
});
afterAll(() => stack?.stop());

async function job(status: string, completed: boolean): Promise<string> {
  const id = randomUUID();
  await stack.orm.em.fork().execute(
    `insert into job (id, kind, workflow_id, status, created_at, updated_at, completed_at) values (?, 'transcription', ?, ?, now(), now(), ${completed ? 'now()' : 'null'})`,
    [id, `wf-${id}`, status],
  );
  return id;
}

/** A job folder with one file, its times set `ageMs` in the past. */
function folder(parent: string, id: string, ageMs: number): string {
  const dir = path.join(stack.dataDir, parent, id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'source.webm'), 'x');
  const t = new Date(Date.now() - ageMs);
  fs.utimesSync(path.join(dir, 'source.webm'), t, t);
  fs.utimesSync(dir, t, t);
  return dir;
}

describe('transcription housekeeping', () => {
  it('removes uploads of jobs never created and work folders of ended jobs, once they are old enough', async () => {
    const old = SWEEP_GRACE_MS + 60_000;
    const failed = await job('failed', true);
    const running = await job('processing', false);
    const orphanUpload = folder('uploads', randomUUID(), old);
    const arrivingUpload = folder('uploads', randomUUID(), 1_000);
    const retryableUpload = folder('uploads', failed, old);
    const endedWork = folder(path.join('tmp', 'transcription'), failed, old);
    const orphanWork = folder(path.join('tmp', 'transcription'), randomUUID(), old);
    const runningWork = folder(path.join('tmp', 'transcription'), running, old);

    await transcriptionKind.housekeeping!({ em: stack.orm.em.fork(), config: stack.config, log });

    for (const gone of [orphanUpload, endedWork, orphanWork]) expect(fs.existsSync(gone), gone).toBe(false);
    for (const kept of [arrivingUpload, retryableUpload, runningWork]) expect(fs.existsSync(kept), kept).toBe(true);
  });

  it('removes the playback copy of a job that is gone, failed or cancelled, and keeps those of done and running jobs', async () => {
    const old = SWEEP_GRACE_MS + 60_000;
    const done = await job('done', true);
    const running = await job('processing', false);
    const failed = await job('failed', true);
    const cancelled = await job('cancelled', true);
    const failedYoung = await job('failed', true);
    const kept = [folder('audio', done, old), folder('audio', running, old), folder('audio', failedYoung, 1_000)];
    const gone = [folder('audio', randomUUID(), old), folder('audio', failed, old), folder('audio', cancelled, old)];

    await transcriptionKind.housekeeping!({ em: stack.orm.em.fork(), config: stack.config, log });

    for (const dir of gone) expect(fs.existsSync(dir), dir).toBe(false);
    for (const dir of kept) expect(fs.existsSync(dir), dir).toBe(true);
  });
});
