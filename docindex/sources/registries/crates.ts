import { parse as parseToml } from 'smol-toml';
import { PermanentError } from '../../../core/errors.js';
import type { PackageInfo, PackageVersion, Registry, SourceContext } from '../types.js';
import { asObject, asString, type ClientLimits, getDocument, httpUrl, invalid, jsonObject, type RegistryCall, startCall } from './fetch.js';
import { repositoryUrl } from './repository.js';
import { latestVersion, SEMVER, sortVersions } from './versions.js';

/**
 * A sparse cargo index (cargo's default registry's, or a mirror named in cargo's configuration): `config.json` says where crates
 * are downloaded (`dl`) and where the web API is (`api`); a crate's entry is one JSON line per version. The index
 * does not know a crate's repository: the web API does when the index names one, else the crate's own Cargo.toml
 * does (`crateRepositoryFromManifest`, for the reader of the archive).
 */
const MB = 1024 * 1024;
const DEFAULTS: ClientLimits = { timeoutMs: 30_000, maxBytes: 16 * MB };

/** Where a crate's entry is in the index, by the length of its (lowercased) name: `1/a`, `2/ab`, `3/a/abc`, `ab/cd/abcd...`. */
export function crateIndexPath(name: string): string {
  const n = name.toLowerCase();
  return `${cratePrefix(n)}/${n}`;
}

function cratePrefix(n: string): string {
  if (n.length <= 2) return String(n.length);
  if (n.length === 3) return `3/${n[0]}`;
  return `${n.slice(0, 2)}/${n.slice(2, 4)}`;
}

/** A version's download URL from `dl`: its markers filled in, or `/{crate}/{version}/download` appended (cargo's rule). */
export function crateDownloadUrl(dl: string, crate: string, version: string, cksum: string): string {
  if (!/\{(crate|version|prefix|lowerprefix|sha256-checksum)\}/.test(dl)) return `${dl.replace(/\/+$/, '')}/${crate}/${version}/download`;
  return dl
    .replaceAll('{crate}', crate)
    .replaceAll('{version}', version)
    .replaceAll('{prefix}', cratePrefix(crate))
    .replaceAll('{lowerprefix}', cratePrefix(crate.toLowerCase()))
    .replaceAll('{sha256-checksum}', cksum);
}

/** The repository a crate's Cargo.toml names (`package.repository`); null when none, or when the text is not TOML. */
export function crateRepositoryFromManifest(cargoToml: string): string | null {
  try {
    const pkg = asObject(asObject(parseToml(cargoToml)).package);
    return repositoryUrl(asString(pkg.repository));
  } catch {
    return null;
  }
}

const SHA256 = /^[0-9a-f]{64}$/i;

interface IndexConfig {
  dl: string;
  api: string | null;
}

async function indexConfig(r: RegistryCall): Promise<IndexConfig> {
  const what = "The crates index's config.json";
  const doc = await getDocument(what, `${r.endpoint.url}config.json`, r, 'application/json');
  if (!doc) throw invalid(`${what} is missing: the index is not a sparse cargo index`);
  const config = jsonObject(what, doc.text);
  const dl = asString(config.dl);
  if (!dl) throw invalid(`${what} does not say where crates are downloaded (dl)`);
  return { dl, api: httpUrl(config.api, doc.url) };
}

/** The index's lines of a crate, one version each; unreadable lines are skipped, as cargo skips them. */
function indexLines(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      const entry = asObject(JSON.parse(line));
      return typeof entry.vers === 'string' && typeof entry.name === 'string' ? [entry] : [];
    } catch {
      return [];
    }
  });
}

/** What the web API says of a crate (repository, description, home page); null when there is no API or no answer. */
async function crateApi(r: RegistryCall, api: string | null, crate: string): Promise<Record<string, unknown> | null> {
  if (!api) return null;
  const what = `The crates API's document of "${crate}"`;
  try {
    const doc = await getDocument(what, `${api.replace(/\/+$/, '')}/api/v1/crates/${encodeURIComponent(crate)}`, r, 'application/json');
    return doc ? asObject(jsonObject(what, doc.text).crate) : null;
  } catch (err) {
    // the index is what matters; a broken API only costs the repository. A refusal or a timeout is not skipped
    if (err instanceof PermanentError && err.code !== 'ADDRESS_NOT_ALLOWED') return null;
    throw err;
  }
}

function crateVersion(entry: Record<string, unknown>, config: IndexConfig, base: string, repository: string | null): PackageVersion {
  const version = entry.vers as string;
  const cksum = typeof entry.cksum === 'string' && SHA256.test(entry.cksum) ? entry.cksum.toLowerCase() : undefined;
  const url = httpUrl(crateDownloadUrl(config.dl, entry.name as string, version, cksum ?? ''), base);
  const pubtime = asString(entry.pubtime);
  return {
    version,
    publishedAt: pubtime && !Number.isNaN(Date.parse(pubtime)) ? new Date(pubtime).toISOString() : null,
    yanked: entry.yanked === true,
    archive: url ? { url, kind: 'tgz', ...(cksum && { sha256: cksum }) } : null,
    repository: repository ? { url: repository } : null,
  };
}

async function lookup(name: string, ctx: SourceContext, limits: ClientLimits): Promise<PackageInfo | null> {
  const r = await startCall('crates', name, ctx, limits);
  const what = `The crates index's entry of "${name}"`;
  const doc = await getDocument(what, `${r.endpoint.url}${crateIndexPath(name)}`, r, 'text/plain, application/json');
  if (!doc) return null;
  const entries = indexLines(doc.text);
  if (!entries.length) throw invalid(`${what} has no readable version`);
  const crate = entries[0]!.name as string;
  const config = await indexConfig(r);
  const api = await crateApi(r, config.api, crate);
  const repository = api ? repositoryUrl(asString(api.repository)) : null;
  const versions = sortVersions(entries.map((e) => crateVersion(e, config, doc.url, repository)), SEMVER);
  return {
    ecosystem: 'crates',
    name: crate,
    description: api ? asString(api.description) : null,
    homepage: api ? httpUrl(api.homepage, doc.url) : null,
    latest: latestVersion(versions, SEMVER)!,
    versions,
  };
}

/** The sparse-index client, with its bounds (tests shorten them). */
export function cratesRegistry(limits: Partial<ClientLimits> = {}): Registry {
  const l = { ...DEFAULTS, ...limits };
  return { ecosystem: 'crates', lookup: (name, ctx) => lookup(name, ctx, l) };
}
