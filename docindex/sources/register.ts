import type { Config } from '../../core/config.js';
import { ValidationError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { request } from '../../outbound/http.js';
import { asValidationError, isAddressRefusal, refused } from '../../outbound/guard.js';
import { libraryIdOfPackage, libraryIdOfSite } from '../ids.js';
import { lookupContext } from './index.js';
import { lookupPackage, validPackageName } from './registries/index.js';
import type { Ecosystem, PackageInfo } from './types.js';

/** What a new package or site library is registered with: its id, and what its source says about it. */
export interface SourceDescription {
  id: string;
  sourceUrl: string;
  title: string;
  description: string | null;
  repositoryUrl: string | null;
}

/** How long registering may wait for a registry or a site to answer. */
const LOOKUP_MS = 15_000;

/** Why a source could not be read, as the API says it: an address refused, or unreachable. */
function unreachable(what: string, err: unknown, code: string): ValidationError {
  if (err instanceof ValidationError) return err;
  if (isAddressRefusal(err)) return asValidationError(refused(what, err), '/body/sourceUrl');
  return new ValidationError(`${what} cannot be read: ${(err as Error).message}`, code);
}

/** A package as its registry has it: 400 PACKAGE_NOT_FOUND when it has none of that name. */
export async function describePackageSource(config: Config, log: Logger, ecosystem: Ecosystem, name: string): Promise<SourceDescription> {
  validPackageName(ecosystem, name.trim());
  const ctx = lookupContext(config, log, AbortSignal.timeout(LOOKUP_MS));
  const info = await lookupPackage(ecosystem, name.trim(), ctx).catch((err: unknown) => {
    throw unreachable(`The ${ecosystem} registry`, err, 'REGISTRY_UNREACHABLE');
  });
  if (!info) throw new ValidationError(`The ${ecosystem} registry has no package ${name.trim()}`, 'PACKAGE_NOT_FOUND', [{ pointer: '/body/sourceUrl', message: 'no such package' }]);
  return packageDescription(info);
}

/** A package library as its registry's description of the package makes it. */
export function packageDescription(info: PackageInfo): SourceDescription {
  const latest = info.versions.find((v) => v.version === info.latest);
  return {
    id: libraryIdOfPackage(info.ecosystem, info.name),
    sourceUrl: info.name,
    title: info.name,
    description: info.description,
    repositoryUrl: latest?.repository?.url ?? null,
  };
}

/** A documentation site: an http(s) URL without credentials, whose start page answers through the outbound guard. */
export async function describeSiteSource(config: Config, log: Logger, startUrl: string): Promise<SourceDescription> {
  let u: URL;
  try {
    u = new URL(startUrl.trim());
  } catch {
    throw new ValidationError('sourceUrl of a website must be an http(s) URL', 'INVALID_SOURCE_URL', [{ pointer: '/body/sourceUrl', message: 'not a URL' }]);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || startUrl.length > 2048) {
    throw new ValidationError('sourceUrl of a website must be an http(s) URL without credentials', 'INVALID_SOURCE_URL', [{ pointer: '/body/sourceUrl', message: 'not an http(s) URL' }]);
  }
  u.hash = '';
  const ctx = lookupContext(config, log, AbortSignal.timeout(LOOKUP_MS));
  try {
    const res = await request('The site', u.href, { method: 'GET' }, { signal: ctx.signal, deadline: Date.now() + LOOKUP_MS }, { guard: ctx.guard });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 400) throw new ValidationError(`The site answered ${res.status} at ${u.href}`, 'SITE_UNREACHABLE');
  } catch (err) {
    throw unreachable('The site', err, 'SITE_UNREACHABLE');
  }
  return { id: libraryIdOfSite(u.href), sourceUrl: u.href, title: u.hostname + (u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '')), description: null, repositoryUrl: null };
}
