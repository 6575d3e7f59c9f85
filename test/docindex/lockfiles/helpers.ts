import fs from 'node:fs';
import { type LockfileResult, parseLockfile } from '../../../docindex/lockfiles/index.js';

export function fixture(name: string): string {
  return fs.readFileSync(new URL(`../../fixtures/lockfiles/${name}`, import.meta.url), 'utf8');
}

/** Parses a fixture under the file name a project would send it with, and the manifest fixture beside it if any. */
export function parseFixture(fileName: string, name: string, manifest?: string): LockfileResult {
  return parseLockfile({ fileName, content: fixture(name), ...(manifest !== undefined && { manifest: fixture(manifest) }) });
}

/** One line per dependency, `dev name@version (range)`, so a whole answer reads at a glance. */
export function lines(result: LockfileResult): string[] {
  return result.dependencies.map((d) => `${d.dev ? 'dev ' : ''}${d.name}@${d.version ?? '-'}${d.range !== undefined ? ` (${d.range})` : ''}`);
}
