import type { Ecosystem, PackageInfo, Registry, SourceContext } from '../types.js';
import { cratesRegistry } from './crates.js';
import { npmRegistry } from './npm.js';
import { pypiRegistry } from './pypi.js';

/**
 * The package registries, each read through its ecosystem's own configuration (config.ts). Every lookup checks the
 * name against its ecosystem's rules (names.ts) before it goes into a URL.
 */
export const REGISTRY: Record<Ecosystem, Registry> = { npm: npmRegistry(), pypi: pypiRegistry(), crates: cratesRegistry() };

/** The package; null when the registry has none of that name. A name the ecosystem does not allow is INVALID_PACKAGE_NAME. */
export function lookupPackage(ecosystem: Ecosystem, name: string, ctx: SourceContext): Promise<PackageInfo | null> {
  return REGISTRY[ecosystem].lookup(name, ctx);
}

export { crateRepositoryFromManifest } from './crates.js';
export { INVALID_PACKAGE_NAME, validPackageName } from './names.js';
export { forgetRegistryEndpoints, registryEndpoint, registryHeaders, type RegistryEndpoint } from './config.js';
export { normalizePypiName } from './pypi.js';
