import type { Collector } from './collect.js';
import { type NpmWanted, packageJsonWanted, registrySpec, SECTIONS, sectionWanted } from './npm-spec.js';
import { entries, field, invalid, readJson, record, type Table, text } from './read.js';

/**
 * package-lock.json and npm-shrinkwrap.json. Versions 2 and 3 keep the project's own package.json as
 * `packages[""]` and each installed package under its folder, `packages["node_modules/<name>"]`; an alias's entry
 * names the real package. Version 1 has only the tree of installed packages, `dependencies`, which does not say
 * which ones the project asked for.
 */

function fromPackages(packages: Table, out: Collector): void {
  const root = record(field(packages, ''));
  if (!root) throw invalid('package-lock.json', '`packages` has no entry for the project itself ("")');
  if (field(root, 'workspaces') !== undefined) out.warn("Only the root package's dependencies are read, not its workspaces'");
  for (const [section, dev] of SECTIONS) {
    for (const wanted of sectionWanted(root, section, dev)) {
      const spec = registrySpec(wanted, out);
      if (!spec) continue;
      const installed = record(field(packages, `node_modules/${wanted.key}`));
      if (!installed) {
        // A peer dependency nobody installed is not one the project uses.
        if (section === 'peerDependencies') continue;
        out.warn(`${wanted.key}: not installed in the lockfile, reported without a version`);
        out.add({ name: spec.name, version: null, range: spec.range, dev });
        continue;
      }
      if (field(installed, 'link') === true) {
        out.warn(`${wanted.key}: a link to a local folder, skipped`);
        continue;
      }
      const name = text(field(installed, 'name')) ?? spec.name;
      out.add({ name, version: text(field(installed, 'version')) ?? null, range: spec.range, dev });
    }
  }
}

/** A version 1 entry's package and version: `npm:real@1.0.0` for an alias; git and folder sources give none. */
function v1Installed(key: string, entry: Table | undefined): { name: string; version: string } | null {
  const version = text(field(entry, 'version'));
  if (version === undefined) return null;
  const alias = /^npm:((?:@[^@/]+\/)?[^@/]+)@(.+)$/.exec(version);
  if (alias) return { name: alias[1]!, version: alias[2]! };
  return /^[0-9]/.test(version) ? { name: key, version } : null;
}

function fromTree(dependencies: Table, manifest: string | undefined, out: Collector): void {
  let wanted: NpmWanted[];
  if (manifest !== undefined) {
    wanted = packageJsonWanted(manifest);
  } else {
    out.warn('lockfileVersion 1 does not say which packages are direct: all installed at the top are reported; send package.json with it to pick the direct ones');
    wanted = entries(dependencies).map(([key, entry]) => ({ key, spec: '*', dev: field(record(entry), 'dev') === true }));
  }
  for (const w of wanted) {
    const spec = registrySpec(w, out);
    if (!spec) continue;
    const entry = record(field(dependencies, w.key));
    const range = manifest === undefined ? {} : { range: spec.range };
    if (!entry) {
      out.warn(`${w.key}: not in the lockfile, reported without a version`);
      out.add({ name: spec.name, version: null, ...range, dev: w.dev });
      continue;
    }
    const installed = v1Installed(w.key, entry);
    if (installed) out.add({ ...installed, ...range, dev: w.dev });
    else out.warn(`${w.key}: not installed from a registry, skipped`);
  }
}

export function readPackageLock(content: string, manifest: string | undefined, out: Collector): void {
  const lock = readJson('package-lock.json', content);
  const packages = record(field(lock, 'packages'));
  if (packages) return fromPackages(packages, out);
  const dependencies = record(field(lock, 'dependencies'));
  if (!dependencies && field(lock, 'lockfileVersion') === undefined) throw invalid('package-lock.json', 'it has neither `lockfileVersion` nor `packages`');
  fromTree(dependencies ?? {}, manifest, out);
}
