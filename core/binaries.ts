import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from './log.js';

const run = promisify(execFile);

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

/** Programs built from one Go module at one version, with some of the module's folders kept beside them. */
export interface GoBuild {
  /** What it is, for logs and errors ("Temporal's server"). */
  what: string;
  module: string;
  /** A module version, `v1.2.3`. */
  version: string;
  /** Binary name -> package path inside the module (`temporal-server` -> `cmd/server`). */
  commands: Record<string, string>;
  /** Folders of the module copied into the cache beside the binaries (data the programs need, such as SQL schemas). */
  folders?: string[];
  /**
   * Build inside a copy of the module (`go build` as its own main module) instead of `go install pkg@version`, which
   * refuses a module whose go.mod has `replace` or `exclude` directives (Docker Compose's).
   */
  asMainModule?: boolean;
}

/** Where Go's module cache holds `module@version`, fetched through Go's own configuration (GOPROXY, GOFLAGS). */
export async function goModuleDir(go: string, module: string, version: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout } = await run(go, ['mod', 'download', '-json', `${module}@${version}`], { env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 });
  const found = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!found.Dir) throw new Error(`go mod download ${module}@${version}: ${found.Error ?? 'no folder'}`);
  return found.Dir;
}

/** A writable copy of `module@version`'s source at `dest`: Go's module cache is read-only. */
export async function copyGoModule(go: string, module: string, version: string, dest: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await fs.cp(await goModuleDir(go, module, version, env), dest, { recursive: true });
  await run('chmod', ['-R', 'u+w', dest]);
}

/** Every binary (and folder) of `build` exists in `dir`. */
async function complete(dir: string, build: GoBuild): Promise<boolean> {
  for (const name of Object.keys(build.commands)) if (!(await isExecutable(path.join(dir, name)))) return false;
  for (const folder of build.folders ?? []) if (!(await fs.stat(path.join(dir, folder)).catch(() => undefined))?.isDirectory()) return false;
  return true;
}

/**
 * Finds `build` in the cache folder `dir`, or builds it there once: `go install module/pkg@version` of every
 * command (or `go build` in a copy of the module, `asMainModule`) into a fresh folder beside `dir` (modules come through Go's own configuration: GOPROXY, GOFLAGS, its
 * module cache), the binaries renamed as asked, the module's folders copied from Go's module cache, then one rename
 * of the whole folder, so a concurrent start never sees half a build. Answers `dir`.
 */
export async function goBuildCached(
  dir: string,
  build: GoBuild,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (await complete(dir, build)) return dir;
  const go = await onPath('go', env);
  const packages = Object.entries(build.commands).map(([name, pkg]) => ({ name, pkg: `${build.module}/${pkg}` }));
  if (!go) {
    throw toolNotFound(`${build.what} is not in ${dir} and Go is not installed to build it`, [], [
      'install Go, which builds it there on the next run',
      ...packages.map((p) => `build it yourself: go build -o ${path.join(dir, p.name)} ${p.pkg}@${build.version}`),
    ]);
  }
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const work = await fs.mkdtemp(path.join(path.dirname(dir), '.build-'));
  const goEnv = { ...env, GOBIN: path.join(work, 'bin'), CGO_ENABLED: '0' };
  try {
    log.info(`building ${build.what} with go from ${build.module}@${build.version} (several minutes the first time)`);
    const started = Date.now();
    const long = { env: goEnv, maxBuffer: 64 * 1024 * 1024, timeout: 60 * 60_000 };
    if (build.asMainModule) {
      // Built in place in a copy, then dropped.
      const copy = path.join(work, 'src');
      await copyGoModule(go, build.module, build.version, copy, goEnv);
      for (const p of Object.entries(build.commands)) await run(go, ['build', '-o', path.join(work, p[0]), `./${p[1]}`], { ...long, cwd: copy });
      await fs.rm(copy, { recursive: true, force: true });
    } else {
      await run(go, ['install', ...packages.map((p) => `${p.pkg}@${build.version}`)], long);
      for (const p of packages) await fs.rename(path.join(work, 'bin', path.basename(p.pkg)), path.join(work, p.name));
      await fs.rm(path.join(work, 'bin'), { recursive: true, force: true });
    }
    if (build.folders?.length) {
      const dir = await goModuleDir(go, build.module, build.version, goEnv);
      for (const folder of build.folders) await fs.cp(path.join(dir, folder), path.join(work, folder), { recursive: true });
    }
    try {
      await fs.rename(work, dir);
    } catch (err) {
      // Another process finished first: its build is as good as ours.
      if (!(await complete(dir, build))) throw err;
    }
    log.info(`built ${build.what}`, { dir, seconds: Math.round((Date.now() - started) / 1000) });
    return dir;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
