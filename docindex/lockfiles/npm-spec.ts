import semver from 'semver';
import type { Collector } from './collect.js';
import { entries, field, readJson, type Table, text } from './read.js';

/**
 * What an npm dependency spec (the value in package.json's `dependencies`) asks for: a range on the registry,
 * possibly under another name (`npm:other@^1`, yarn berry's `npm:^1`), or a package from somewhere else (a workspace,
 * a folder, git, a URL), which no registry's documentation describes.
 */
export type NpmSpec = { kind: 'registry'; name: string; range: string } | { kind: 'local' | 'git' | 'url' };

/** A dependency as a manifest or a lockfile's root lists it: its key, its spec, and whether it is for development. */
export interface NpmWanted {
  key: string;
  spec: string;
  dev: boolean;
}

const ALIAS = /^npm:((?:@[^@/]+\/)?[^@/]+)@(.*)$/;

export function npmSpec(key: string, spec: string): NpmSpec {
  const alias = ALIAS.exec(spec);
  if (alias) return { kind: 'registry', name: alias[1]!, range: alias[2]! };
  if (spec.startsWith('npm:')) return { kind: 'registry', name: key, range: spec.slice(4) };
  if (/^(workspace|file|link|portal|patch|exec):|^\.{0,2}\/|^~\//.test(spec)) return { kind: 'local' };
  if (/^(git|git\+[a-z]+|github|gitlab|bitbucket|gist):|^[^@/\s:]+\/[^/\s]+$/i.test(spec)) return { kind: 'git' };
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) return { kind: 'url' };
  return { kind: 'registry', name: key, range: spec };
}

const FROM = { local: 'a workspace or a local folder', git: 'a git repository', url: 'a URL' };

/** The registry package and range a dependency asks for; null, with a warning, when it comes from elsewhere. */
export function registrySpec(wanted: NpmWanted, out: Collector): { name: string; range: string } | null {
  const spec = npmSpec(wanted.key, wanted.spec);
  if (spec.kind === 'registry') return spec;
  out.warn(`${wanted.key}: comes from ${FROM[spec.kind]}, not a registry: skipped`);
  return null;
}

/** The dependency sections of a package.json and the like, production ones first. */
export const SECTIONS: [section: string, dev: boolean][] = [
  ['dependencies', false],
  ['optionalDependencies', false],
  ['peerDependencies', false],
  ['devDependencies', true],
];

export function sectionWanted(table: Table | undefined, section: string, dev: boolean): NpmWanted[] {
  return entries(field(table, section)).flatMap(([key, value]) => {
    const spec = text(value);
    return spec === undefined ? [] : [{ key, spec, dev }];
  });
}

/** What a package.json asks for, section by section. */
export function packageJsonWanted(content: string): NpmWanted[] {
  const manifest = readJson('package.json', content);
  return SECTIONS.flatMap(([section, dev]) => sectionWanted(manifest, section, dev));
}

/** package.json on its own: ranges; a version only where the range is one exact version (`"react": "18.2.0"`). */
export function readPackageJson(content: string, out: Collector): void {
  for (const wanted of packageJsonWanted(content)) {
    const spec = registrySpec(wanted, out);
    if (spec) out.add({ name: spec.name, version: semver.valid(spec.range.trim()), range: spec.range, dev: wanted.dev });
  }
}
