import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The user-level cache shared by every clone on the machine: `$GRISTMILL_CACHE_DIR`, else `~/.cache/gristmill`. */
export function gristmillCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.GRISTMILL_CACHE_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'gristmill');
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on `env.PATH`. */
export async function onPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The one error for a tool that could not be found or obtained: what each way tried answered, then every way to fix
 * it, so nobody has to guess which lookup failed.
 */
export function toolNotFound(what: string, failures: string[], fixes: string[]): Error {
  return new Error(
    [`${what} (${failures.join('; ') || 'not on PATH'}). Any one of these fixes it:`, ...fixes.map((f, i) => `  - ${f}${i < fixes.length - 1 ? ', or' : '.'}`)].join('\n'),
  );
}
