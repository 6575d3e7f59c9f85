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
