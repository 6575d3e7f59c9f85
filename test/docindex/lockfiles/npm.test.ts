import { describe, expect, it } from 'vitest';
import { parseLockfile } from '../../../docindex/lockfiles/index.js';
import { pnpmVersion } from '../../../docindex/lockfiles/pnpm.js';
import { fixture, lines, parseFixture } from './helpers.js';

describe('package-lock.json', () => {
  it('v3: the root entry names the direct dependencies, node_modules entries their installed versions', () => {
    const result = parseFixture('package-lock.json', 'package-lock-v3.json');
    expect(result.format).toBe('package-lock.json');
    expect(result.ecosystem).toBe('npm');
    expect(lines(result)).toEqual([
      '@fastify/cors@10.0.1 (^10.0.1)',
      'fastify@5.2.0 (^5.2.0)',
      'fsevents@2.3.3 (^2.3.3)',
      'lodash-es@4.17.21 (4.17.21)',
      // An installed peer counts; `react`, a peer nobody installed, does not.
      'pino@9.4.0 (^9.0.0)',
      // The alias string-width-cjs is the real package string-width.
      'string-width@4.2.3 (^4.2.0)',
      'dev @types/node@20.11.30 (^20.11.0)',
      'dev typescript@5.4.5 (~5.4.5)',
    ]);
    // Transitive packages (avvio, nested under fastify) are not direct.
    expect(result.dependencies.map((d) => d.name)).not.toContain('avvio');
    expect(result.warnings).toEqual([
      'internal-utils: comes from a workspace or a local folder, not a registry: skipped',
      'left-pad: comes from a git repository, not a registry: skipped',
    ]);
  });

  it('v2: reads `packages` (not the v1 tree kept beside it) and says workspaces are not read', () => {
    const result = parseFixture('package-lock.json', 'package-lock-v2.json');
    expect(lines(result)).toEqual(['fastify@5.2.0 (^5.2.0)', 'dev typescript@5.4.5 (~5.4.5)']);
    expect(result.warnings).toEqual(["Only the root package's dependencies are read, not its workspaces'"]);
  });

  it('v1 alone: every top-level package with its dev flag, and a warning that direct ones are unknown', () => {
    const result = parseFixture('package-lock.json', 'package-lock-v1.json');
    expect(lines(result)).toEqual([
      '@fastify/cors@10.0.1',
      'fastify@5.2.0',
      'fastify-plugin@5.0.1',
      'fsevents@2.3.3',
      'lodash-es@4.17.21',
      'string-width@4.2.3',
      'dev @types/node@20.11.30',
      'dev typescript@5.4.5',
    ]);
    expect(result.warnings[0]).toMatch(/lockfileVersion 1 does not say which packages are direct.*send package\.json/);
  });

  it('v1 with package.json: the manifest picks the direct ones and the dev split', () => {
    const result = parseFixture('package-lock.json', 'package-lock-v1.json', 'package-manifest.json');
    expect(lines(result)).toEqual([
      '@fastify/cors@10.0.1 (^10.0.1)',
      'fastify@5.2.0 (^5.2.0)',
      'fsevents@2.3.3 (^2.3.3)',
      'lodash-es@4.17.21 (4.17.21)',
      'pino@- (^9.0.0)',
      'string-width@4.2.3 (^4.2.0)',
      'dev @types/node@20.11.30 (^20.11.0)',
      'dev typescript@5.4.5 (~5.4.5)',
    ]);
    expect(result.warnings).toContain('pino: not in the lockfile, reported without a version');
  });

  it('a root entry missing from `packages` is malformed', () => {
    const content = JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/a': { version: '1.0.0' } } });
    expect(() => parseLockfile({ fileName: 'package-lock.json', content })).toThrow(expect.objectContaining({ code: 'LOCKFILE_INVALID' }));
  });
});

describe('pnpm-lock.yaml', () => {
  const expected = [
    '@fastify/cors@10.0.1 (^10.0.1)',
    'fastify@5.2.0 (^5.2.0)',
    'react-dom@18.2.0 (^18.2.0)',
    'string-width@4.2.3 (^4.2.0)',
    'dev @types/node@20.11.30 (^20.11.0)',
    'dev typescript@5.4.5 (~5.4.5)',
  ];

  it('v5.4: top-level sections with `specifiers`, peer suffixes `_react@18.2.0` and `/name/version` aliases', () => {
    const result = parseFixture('pnpm-lock.yaml', 'pnpm-lock-v5.yaml');
    expect(lines(result)).toEqual(expected);
    expect(result.warnings).toEqual(['internal-utils: comes from a workspace or a local folder, not a registry: skipped']);
  });

  it("v6: importers['.'] with { specifier, version }, peer suffixes `(react@18.2.0)`, `/name@version` aliases", () => {
    const result = parseFixture('pnpm-lock.yaml', 'pnpm-lock-v6.yaml');
    expect(lines(result)).toEqual([...expected.slice(0, 2), 'fsevents@2.3.3 (^2.3.3)', ...expected.slice(2)]);
    // The other importer's bullmq is not the root project's.
    expect(result.dependencies.map((d) => d.name)).not.toContain('bullmq');
    expect(result.warnings).toEqual([
      "Only the root project's dependencies are read, not the other workspace projects'",
      'left-pad: comes from a git repository, not a registry: skipped',
    ]);
  });

  it('v9: importers without leading slashes, `name@version` aliases, workspace links skipped', () => {
    const result = parseFixture('pnpm-lock.yaml', 'pnpm-lock-v9.yaml');
    expect(lines(result)).toEqual(expected);
    expect(result.warnings).toContain('shop-utils: comes from a workspace or a local folder, not a registry: skipped');
  });

  it('pnpm 10: the lockfile is the document with lockfileVersion, after its environment document', () => {
    const content = `---\nlockfileVersion: '9.0'\nimporters:\n  .:\n    configDependencies: {}\n---\n${fixture('pnpm-lock-v9.yaml')}`;
    expect(lines(parseLockfile({ fileName: 'pnpm-lock.yaml', content }))).toEqual(expected);
  });

  it.each([
    ['18.2.0', { name: 'react-dom', version: '18.2.0' }],
    ['18.2.0(react@18.2.0)(typescript@5.4.5)', { name: 'react-dom', version: '18.2.0' }],
    ['18.2.0_react@18.2.0', { name: 'react-dom', version: '18.2.0' }],
    ['1.0.0-beta.1_@types+react@18.0.0', { name: 'react-dom', version: '1.0.0-beta.1' }],
    ['/@scope/real/2.0.0_react@18.2.0', { name: '@scope/real', version: '2.0.0' }],
    ['/@scope/real@2.0.0(react@18.2.0)', { name: '@scope/real', version: '2.0.0' }],
    ['real@2.0.0', { name: 'real', version: '2.0.0' }],
    ['git.example.test/a/b/5f8d2a1b7c1e4ed6b1f3a2c9d8e7f6a5b4c3d2e1', null],
    ['link:../x', null],
  ])('pnpmVersion(%j)', (raw, expected) => {
    expect(pnpmVersion('react-dom', raw)).toEqual(expected);
  });
});

describe('yarn.lock', () => {
  it('classic alone: every package, with a warning that direct ones are unknown', () => {
    const result = parseFixture('yarn.lock', 'yarn-v1.lock');
    expect(result.dependencies.map((d) => d.name)).toEqual([
      '@fastify/cors', '@types/node', 'fastify', 'fastify-plugin', 'fsevents', 'lodash-es', 'pino', 'string-width', 'typescript',
    ]);
    expect(result.dependencies.every((d) => !d.dev)).toBe(true);
    expect(result.warnings).toEqual([expect.stringMatching(/does not say which packages are direct.*send package\.json/)]);
  });

  it('classic with package.json: entries found by the descriptor `name@range`, aliases by theirs', () => {
    const result = parseFixture('yarn.lock', 'yarn-v1.lock', 'package-manifest.json');
    expect(lines(result)).toEqual([
      '@fastify/cors@10.0.1 (^10.0.1)',
      'fastify@5.2.0 (^5.2.0)',
      'fsevents@2.3.3 (^2.3.3)',
      'lodash-es@4.17.21 (4.17.21)',
      'pino@9.4.0 (^9.0.0)',
      'string-width@4.2.3 (^4.2.0)',
      'dev @types/node@20.11.30 (^20.11.0)',
      'dev typescript@5.4.5 (~5.4.5)',
    ]);
  });

  it("berry alone: the root workspace's entry names the direct ones, without a dev split", () => {
    const result = parseFixture('yarn.lock', 'yarn-berry.lock');
    expect(lines(result)).toEqual([
      '@fastify/cors@10.0.1 (^10.0.1)',
      '@types/node@20.11.30 (^20.11.0)',
      // Found under the key `fastify@npm:^5.0.0, fastify@npm:^5.2.0`.
      'fastify@5.2.0 (^5.2.0)',
      'lodash-es@4.17.21 (4.17.21)',
      'string-width@4.2.3 (^4.2.0)',
      'typescript@5.4.5 (~5.4.5)',
    ]);
    expect(result.warnings).toEqual([
      'yarn.lock does not tell development dependencies apart: send package.json with it to split them',
      'internal-utils: comes from a workspace or a local folder, not a registry: skipped',
    ]);
  });

  it('berry with package.json: the dev split, and what the lockfile lacks reported without a version', () => {
    const result = parseFixture('yarn.lock', 'yarn-berry.lock', 'package-manifest.json');
    expect(lines(result)).toContain('dev typescript@5.4.5 (~5.4.5)');
    expect(lines(result)).toContain('pino@- (^9.0.0)');
    expect(result.warnings).toContain('pino@^9.0.0: not in yarn.lock, reported without a version');
  });

  it('berry without a root workspace entry: every npm package, patches and workspaces left out', () => {
    const content = fixture('yarn-berry.lock').replace('"shop-api@workspace:."', '"shop-lib@workspace:packages/lib"');
    const names = parseLockfile({ fileName: 'yarn.lock', content }).dependencies.map((d) => `${d.name}@${d.version}`);
    expect(names).toEqual(['@fastify/cors@10.0.1', '@types/node@20.11.30', 'fastify@5.2.0', 'fastify-plugin@5.0.1', 'lodash-es@4.17.21', 'string-width@4.2.3', 'typescript@5.4.5']);
  });

  it('a malformed classic lockfile says where', () => {
    const content = '# yarn lockfile v1\n\nfastify@^5.2.0:\n  version "5.2.0"\n  resolved\n';
    expect(() => parseLockfile({ fileName: 'yarn.lock', content })).toThrow(/yarn\.lock is not valid: .*line \d+/);
  });
});

describe('package.json', () => {
  it('ranges without versions, except a range that is one exact version; non-registry specs skipped', () => {
    const result = parseFixture('package.json', 'package-manifest.json');
    expect(lines(result)).toEqual([
      '@fastify/cors@- (^10.0.1)',
      'fastify@- (^5.2.0)',
      'fsevents@- (^2.3.3)',
      'lodash-es@4.17.21 (4.17.21)',
      'pino@- (^9.0.0)',
      'string-width@- (^4.2.0)',
      'dev @types/node@- (^20.11.0)',
      'dev typescript@- (~5.4.5)',
    ]);
    expect(result.warnings).toHaveLength(2);
  });

  it('a dependency listed for production and development is reported once, for production', () => {
    const content = JSON.stringify({ dependencies: { zod: '^3.23.0' }, devDependencies: { zod: '^3.23.0', vitest: '^2.0.0' } });
    expect(lines(parseLockfile({ fileName: 'package.json', content }))).toEqual(['zod@- (^3.23.0)', 'dev vitest@- (^2.0.0)']);
  });
});
