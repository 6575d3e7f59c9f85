import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps.js';
import { PermanentError } from '../../core/errors.js';
import type { Library, LibraryVersion } from '../entities/library.js';
import { isGitRemoteUrl } from '../ids.js';
import { extractArchive } from './archive.js';
import { downloadTo } from './download.js';
import { pruneToPackageDocs } from './package-docs.js';
import { crateRepositoryFromManifest, lookupPackage, registryHeaders } from './registries/index.js';
import { checkoutPublished, type CheckoutProgress } from './repository.js';
import type { Checkout, Ecosystem, PackageInfo, PackageVersion, SourceContext } from './types.js';

/** The package a library names, as its registry describes it now; a package the registry no longer has fails the job. */
export async function describePackage(lib: Pick<Library, 'source' | 'sourceUrl'>, ctx: SourceContext): Promise<PackageInfo> {
  const info = await lookupPackage(lib.source as Ecosystem, lib.sourceUrl, ctx);
  if (!info) throw new PermanentError(`The ${lib.source} registry has no package ${lib.sourceUrl}`, 'PACKAGE_NOT_FOUND');
  return info;
}

/** The version a scope holds: the tag of a registered version, else the registry's latest. */
export function versionOf(info: PackageInfo, version: LibraryVersion | null): PackageVersion {
  const wanted = version?.tag ?? info.latest;
  const found = info.versions.find((v) => v.version === wanted);
  if (!found) throw new PermanentError(`The ${info.ecosystem} registry has no version ${wanted} of ${info.name}`, 'VERSION_NOT_FOUND');
  return found;
}

/**
 * A package version's files: its repository at the commit or tag it was published from, when the registry names
 * one and it can be read (the whole documentation, as a git-host library would have it); else the documentation
 * inside the package's archive (docindex/sources/package-docs.ts). `commit` is the commit read, or `<version>`.
 */
export async function checkoutPackage(
  deps: ActivityDeps,
  lib: Library,
  version: LibraryVersion | null,
  ctx: SourceContext,
  progress: CheckoutProgress,
): Promise<Checkout & { packageVersion: string }> {
  const info = await describePackage(lib, ctx);
  const v = versionOf(info, version);
  const warnings: string[] = [];
  if (v.yanked) warnings.push(`${info.name} ${v.version} is ${info.ecosystem === 'npm' ? 'deprecated' : 'yanked'}`);
  const fromRepo = await readRepository(deps, info, v, ctx, progress, warnings);
  if (fromRepo) return { ...fromRepo, warnings, packageVersion: v.version };
  const archive = await readArchive(deps, info, v, ctx);
  // A crate's repository is only in its manifest: read the archive's, then try the repository once more.
  if (info.ecosystem === 'crates' && !v.repository) {
    const manifest = await fs.readFile(path.join(archive.root, 'Cargo.toml'), 'utf8').catch(() => '');
    const url = crateRepositoryFromManifest(manifest);
    const again = url ? await readRepository(deps, info, { ...v, repository: { url } }, ctx, progress, warnings) : undefined;
    if (again) return { ...again, warnings, packageVersion: v.version };
  }
  const kept = await pruneToPackageDocs(archive.root, { sourceIsDocumentation: info.ecosystem === 'crates' });
  if (!kept.keep.length) throw new PermanentError(`${info.name} ${v.version} has no documentation in its package and no repository that could be read`, 'NO_DOCUMENTATION');
  warnings.push(`documentation from the ${info.ecosystem} package (${kept.keep.length} files${kept.typeDeclarations ? ', type declarations' : ''})`);
  return { root: archive.root, commit: v.version, warnings, counts: { archiveFiles: archive.files }, packageVersion: v.version };
}

/** The repository at the version, or undefined (with a warning saying why) when there is none or it cannot be read. */
async function readRepository(
  deps: ActivityDeps,
  info: PackageInfo,
  v: PackageVersion,
  ctx: SourceContext,
  progress: CheckoutProgress,
  warnings: string[],
): Promise<Omit<Checkout, 'warnings'> | undefined> {
  const repo = v.repository;
  if (!repo || !isGitRemoteUrl(repo.url)) return undefined;
  const target = path.join(ctx.workdir, 'repository');
  try {
    const { commit, ref } = await checkoutPublished(deps, repo, info.name, v.version, target, progress);
    const root = repo.directory ? path.join(target, safeSubfolder(repo.directory)) : target;
    const exists = await fs.stat(root).then((s) => s.isDirectory(), () => false);
    warnings.push(`read from ${repo.url} at ${ref}${exists && repo.directory ? ` (${repo.directory})` : ''}`);
    return { root: exists ? root : target, commit };
  } catch (err) {
    ctx.signal.throwIfAborted();
    await fs.rm(target, { recursive: true, force: true });
    warnings.push(`the repository ${repo.url} could not be read (${(err as Error).message.slice(0, 200)}): documentation from the package instead`);
    return undefined;
  }
}

/** A monorepo package's folder, kept inside the checkout. */
function safeSubfolder(dir: string): string {
  const clean = path.posix.normalize(dir.replace(/\\/g, '/')).replace(/^(\.\.(\/|$))+/, '').replace(/^\/+/, '');
  return clean === '.' ? '' : clean;
}

/** The package's archive, downloaded (checked against its hash) and extracted safely into the work folder. */
async function readArchive(deps: ActivityDeps, info: PackageInfo, v: PackageVersion, ctx: SourceContext): Promise<{ root: string; files: number }> {
  if (!v.archive) throw new PermanentError(`${info.name} ${v.version} has no archive and no repository that could be read`, 'NO_DOCUMENTATION');
  const file = path.join(ctx.workdir, `package.${v.archive.kind}`);
  const max = deps.config.sources.packageMaxBytes;
  await downloadTo(v.archive.url, file, ctx, {
    maxBytes: max,
    what: `${info.name} ${v.version}'s archive`,
    // A private registry's credentials, for its own origin only (a tarball elsewhere gets none).
    headers: await registryHeaders(info.ecosystem, v.archive.url),
    ...(v.archive.sha256 && { sha256: v.archive.sha256 }),
    ...(v.archive.sha512 && { sha512: v.archive.sha512 }),
  });
  const out = await extractArchive(file, v.archive.kind, path.join(ctx.workdir, 'package'), { maxTotalBytes: max, signal: ctx.signal });
  await fs.rm(file, { force: true });
  return { root: out.root, files: out.files };
}
