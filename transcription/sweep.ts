import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../core/log.js';
import { TEXT_ARRAY, textArray } from '../db/sql.js';

/** Files younger than this are left alone: an upload may still be arriving, or its job row be about to commit. */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;

/** The newest modification time of a folder and anything in it (an upload in progress keeps touching its file). */
async function newestChange(dir: string): Promise<number> {
  let newest = (await fs.stat(dir)).mtimeMs;
  for (const entry of await fs.readdir(dir, { recursive: true })) {
    const st = await fs.stat(path.join(dir, entry)).catch(() => undefined);
    if (st) newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

/**
 * Removes per-job folders nobody will read again: `uploads/<id>` of a job that was never created (the API stopped
 * between receiving the file and committing the job), and `tmp/transcription/<id>` of a job that is not running
 * (a worker died before cleaning up after its run), and `audio/<id>` (the playback copy) of a job that is gone,
 * failed or cancelled (a retry makes it again). Uploads of failed or cancelled jobs stay: a retry reads them.
 */
export async function sweepTranscriptionFiles(em: EntityManager, dataDir: string, log: Logger, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  const sweep = async (parent: string, keep: (ids: string[]) => Promise<Set<string>>) => {
    const ids = await fs.readdir(parent).catch(() => [] as string[]);
    if (!ids.length) return;
    const kept = await keep(ids);
    for (const id of ids) {
      if (kept.has(id)) continue;
      const dir = path.join(parent, id);
      if (now - (await newestChange(dir).catch(() => now)) < SWEEP_GRACE_MS) continue;
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(dir);
    }
  };
  const ids = (where: string) => async (candidates: string[]) => {
    const rows: { id: string }[] = await em.execute(`select id from job where id = any(${TEXT_ARRAY}) ${where}`, [textArray(candidates)]);
    return new Set(rows.map((r) => r.id));
  };
  const existing = ids('');
  const running = ids('and completed_at is null');
  const playable = ids(`and (completed_at is null or status = 'done')`);
  await sweep(path.join(dataDir, 'uploads'), existing);
  await sweep(path.join(dataDir, 'tmp', 'transcription'), running);
  await sweep(path.join(dataDir, 'audio'), playable);
  if (removed.length) log.info('removed files of transcription jobs that will not read them', { folders: removed.length });
  return removed;
}
