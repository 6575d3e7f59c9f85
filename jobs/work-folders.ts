import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes a run's or an attempt's own folder, and the job's folder above it once nothing else is in it (docs/jobs.md,
 * "Work folders"): another run's or attempt's folder beside it is never touched.
 */
export async function removeWorkFolder(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rmdir(path.dirname(dir)).catch(() => undefined); // not empty: another run's or attempt's folder is there
}
