import type { PackageInfo, PackageVersion, Registry, SourceContext } from '../types.js';
import { asObject, asString, type ClientLimits, getDocument, httpUrl, invalid, jsonObject, startCall } from './fetch.js';
import { repositoryUrl } from './repository.js';
import { latestVersion, SEMVER, sortVersions } from './versions.js';

/**
 * npm's registry: a package's document (the "packument": every version's manifest, `dist-tags`, publish times) at
 * `<registry>/<name>`, a scoped name as one path segment (`@scope%2fname`). A version's repository is its
 * manifest's `repository` (or the package's), at its `gitHead`; its archive is `dist.tarball` with `dist.integrity`.
 */
const MB = 1024 * 1024;
const DEFAULTS: ClientLimits = { timeoutMs: 30_000, maxBytes: 64 * MB };

/** The path of a package's document: `@scope/name` is one segment, as npm writes it (`@scope%2fname`). */
export function npmDocumentPath(name: string): string {
  return name.startsWith('@') ? `@${encodeURIComponent(name.slice(1)).replace(/%2F/g, '%2f')}` : encodeURIComponent(name);
}

/** A git commit as npm records it (gitHead); anything else is not passed on to git. */
const COMMIT = /^[0-9a-f]{7,40}$/i;

/** A folder inside the repository (a monorepo's package): relative, without `..`. */
function directoryOf(raw: unknown): string | undefined {
  const dir = asString(raw)?.replace(/^\.?\/+/, '').replace(/\/+$/, '');
  // eslint-disable-next-line no-control-regex
  if (!dir || dir.split('/').includes('..') || /[\u0000-\u001f\\]/.test(dir)) return undefined;
  return dir;
}

/** `repository` as npm allows it: a string (URL or shorthand) or `{ type, url, directory }`. */
export function npmRepository(raw: unknown, gitHead: unknown): PackageVersion['repository'] {
  const obj = asObject(raw);
  const url = repositoryUrl(typeof raw === 'string' ? raw : asString(obj.url));
  if (!url) return null;
  const ref = typeof gitHead === 'string' && COMMIT.test(gitHead) ? gitHead : undefined;
  const directory = directoryOf(obj.directory);
  return { url, ...(ref && { ref }), ...(directory && { directory }) };
}

/** `sha512-<base64>` of a Subresource Integrity string, as hex. */
export function sha512FromIntegrity(integrity: unknown): string | undefined {
  if (typeof integrity !== 'string') return undefined;
  const m = /(?:^|\s)sha512-([A-Za-z0-9+/]+={0,2})(?:\s|$)/.exec(integrity);
  const hex = m ? Buffer.from(m[1]!, 'base64').toString('hex') : '';
  return hex.length === 128 ? hex : undefined;
}

function npmVersion(version: string, manifest: Record<string, unknown>, doc: Record<string, unknown>, base: string): PackageVersion {
  const dist = asObject(manifest.dist);
  const tarball = httpUrl(dist.tarball, base);
  const sha512 = sha512FromIntegrity(dist.integrity);
  const published = asString(asObject(doc.time)[version]);
  return {
    version,
    publishedAt: published && !Number.isNaN(Date.parse(published)) ? new Date(published).toISOString() : null,
    yanked: Boolean(manifest.deprecated),
    archive: tarball ? { url: tarball, kind: 'tgz', ...(sha512 && { sha512 }) } : null,
    repository: npmRepository(manifest.repository ?? doc.repository, manifest.gitHead),
  };
}

/** A packument as PackageInfo; null when it has no versions (all unpublished). */
export function packageFromPackument(name: string, doc: Record<string, unknown>, base: string): PackageInfo | null {
  const manifests = asObject(doc.versions);
  const versions = Object.entries(manifests).map(([v, m]) => npmVersion(v, asObject(m), doc, base));
  if (!versions.length) return null;
  sortVersions(versions, SEMVER);
  // the `latest` tag, unless it names nothing or a deprecated version
  const tagged = asString(asObject(doc['dist-tags']).latest);
  const usable = tagged && versions.find((v) => v.version === tagged && !v.yanked);
  const latest = usable ? usable.version : latestVersion(versions, SEMVER)!;
  return {
    ecosystem: 'npm',
    name: asString(doc.name) ?? name,
    description: asString(doc.description),
    homepage: httpUrl(doc.homepage, base),
    latest,
    versions,
  };
}

async function lookup(name: string, ctx: SourceContext, limits: ClientLimits): Promise<PackageInfo | null> {
  const r = await startCall('npm', name, ctx, limits);
  const what = `The npm registry's document of "${name}"`;
  const url = `${r.endpoint.url}${npmDocumentPath(name)}`;
  const doc = await getDocument(what, url, r, 'application/json');
  if (!doc) return null;
  const packument = jsonObject(what, doc.text);
  if (packument.versions !== undefined && typeof packument.versions !== 'object') throw invalid(`${what} has no readable versions`);
  return packageFromPackument(name, packument, doc.url);
}

/** npm's registry client, with its bounds (tests shorten them). */
export function npmRegistry(limits: Partial<ClientLimits> = {}): Registry {
  const l = { ...DEFAULTS, ...limits };
  return { ecosystem: 'npm', lookup: (name, ctx) => lookup(name, ctx, l) };
}
