import crypto from 'node:crypto';
import os from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PermanentError, RecoverableError, ValidationError } from '../../../core/errors.js';
import { createLogger } from '../../../core/log.js';
import { request } from '../../../outbound/http.js';
import { OutboundGuard } from '../../../outbound/guard.js';
import { loadConfig } from '../../../runtime/config.js';
import { FakeRegistries } from '../../../fakes/fake-registries.js';
import { crateRepositoryFromManifest, cratesRegistry } from '../../../docindex/sources/registries/crates.js';
import { forgetRegistryEndpoints, registryHeaders } from '../../../docindex/sources/registries/config.js';
import { lookupPackage, REGISTRY, validPackageName } from '../../../docindex/sources/registries/index.js';
import { npmRegistry } from '../../../docindex/sources/registries/npm.js';
import { pypiRegistry } from '../../../docindex/sources/registries/pypi.js';
import type { PackageInfo, SourceContext } from '../../../docindex/sources/types.js';

/**
 * The registry clients (docindex/sources/registries/) against the fake registries (fakes/fake-registries.ts), found
 * through each ecosystem's own configuration pointed at the fake: versions, latest, yanked, repository and ref,
 * archives and their hashes; unknown packages, failing, hanging and malformed registries; refused addresses; and
 * credentials that go to the registry's origin only.
 */
const TOKEN = 'npm-token-abcdef123456';
const config = loadConfig({ OUTBOUND_ALLOW: '127.0.0.1' });
const guard = new OutboundGuard(config.outbound);

function ctx(g: OutboundGuard = guard): SourceContext {
  return { config, guard: g, log: createLogger('silent'), signal: new AbortController().signal, workdir: os.tmpdir(), heartbeat: () => undefined };
}

let fake: FakeRegistries;
/** Another origin (127.0.0.2), which the guard does not allow. */
let other: FakeRegistries;
const savedEnv = { ...process.env };

beforeAll(async () => {
  fake = await FakeRegistries.start();
  other = await FakeRegistries.start('127.0.0.2');
  delete process.env.CARGO_REGISTRIES_CRATES_IO_INDEX;
  Object.assign(process.env, fake.npmEnv(TOKEN), fake.pipEnv(), { CARGO_HOME: fake.cargoHome() });
  forgetRegistryEndpoints();

  await fake.publish('npm', 'docs-kit', '1.0.0', { 'README.md': '# one' }, { repository: 'github:acme/docs-kit', gitHead: 'a'.repeat(40) });
  await fake.publish('npm', 'docs-kit', '1.10.0', { 'README.md': '# ten' }, {
    repository: { type: 'git', url: 'git+https://github.com/acme/monorepo.git', directory: 'packages/docs-kit' }, gitHead: 'b'.repeat(40),
  });
  await fake.publish('npm', 'docs-kit', '1.9.0', { 'README.md': '# nine' }, { deprecated: 'broken' });
  await fake.publish('npm', 'docs-kit', '2.0.0-beta.1', { 'README.md': '# beta' });
  await fake.publish('npm', '@acme/widgets', '0.3.0', { 'README.md': '# widgets' }, { repository: 'git@github.com:acme/widgets.git', gitHead: '--upload-pack=x' });
  await fake.publish('npm', 'far-away', '1.0.0', { 'README.md': '# far' }, { archiveUrl: `${other.url}/npm/far-away/-/far-away-1.0.0.tgz` });
  await other.publish('npm', 'far-away', '1.0.0', { 'README.md': '# far' });

  const pyMeta = { description: 'Docs for Python', projectUrls: { Documentation: 'https://docs.example.org/', Source: 'https://github.com/acme/py-docs/tree/main/src' } };
  await fake.publish('pypi', 'Py_Docs.Kit', '1.2', { 'README.md': 'one two' }, pyMeta);
  await fake.publish('pypi', 'Py_Docs.Kit', '1.10', { 'README.md': 'ten' }, { ...pyMeta, wheel: true });
  await fake.publish('pypi', 'Py_Docs.Kit', '1.11', { 'README.md': 'eleven' }, { ...pyMeta, yanked: 'security hole' });
  await fake.publish('pypi', 'Py_Docs.Kit', '2.0rc1', { 'README.md': 'rc' }, pyMeta);
  await fake.publish('pypi', 'Py_Docs.Kit', '1.3', { 'mod.py': '"""wheel only"""' }, { ...pyMeta, wheel: 'only' });

  for (const [name, v] of [['a', '0.1.0'], ['ab', '0.1.0'], ['abc', '0.1.0']] as const) await fake.publish('crates', name, v, { 'src/lib.rs': '' });
  const crateMeta = { repository: 'https://github.com/acme/serde-docs', description: 'Serde docs' };
  await fake.publish('crates', 'Serde_Docs', '1.0.0', { 'README.md': '# serde' }, crateMeta);
  await fake.publish('crates', 'Serde_Docs', '1.1.0', { 'README.md': '# serde' }, { ...crateMeta, yanked: true });
  await fake.publish('crates', 'Serde_Docs', '1.2.0-alpha.1', { 'README.md': '# serde' }, crateMeta);
});

afterAll(async () => {
  process.env = savedEnv;
  forgetRegistryEndpoints();
  await Promise.all([fake?.close(), other?.close(), guard.close()]);
});

beforeEach(() => {
  fake.clearFaults();
  fake.requests.length = 0;
  fake.pypiHtmlOnly = false;
  fake.cratesDlMarkers = false;
});

const version = (info: PackageInfo | null, v: string) => info!.versions.find((x) => x.version === v)!;
const sha = (alg: string, b: Buffer) => crypto.createHash(alg).update(b).digest('hex');
async function download(url: string): Promise<Buffer> {
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  const err = await p.then(() => undefined, (e: unknown) => e as Error);
  expect(err, 'the call should have failed').toBeInstanceOf(Error);
  return err!;
}

describe('npm', () => {
  it('reads versions, the latest, deprecated ones, repositories at their gitHead, and archives with their integrity', async () => {
    const info = await lookupPackage('npm', 'docs-kit', ctx());
    expect(info!.versions.map((v) => v.version)).toEqual(['1.0.0', '1.9.0', '1.10.0', '2.0.0-beta.1']);
    expect(info!.latest).toBe('1.10.0');
    expect(version(info, '1.9.0').yanked).toBe(true);
    expect(version(info, '1.0.0').repository).toEqual({ url: 'https://github.com/acme/docs-kit', ref: 'a'.repeat(40) });
    expect(version(info, '1.10.0').repository).toEqual({ url: 'https://github.com/acme/monorepo', ref: 'b'.repeat(40), directory: 'packages/docs-kit' });
    const archive = version(info, '1.10.0').archive!;
    expect(archive.kind).toBe('tgz');
    expect(archive.url.startsWith(fake.npmRegistry)).toBe(true);
    expect(archive.sha512).toBe(sha('sha512', await download(archive.url)));
    expect(version(info, '1.0.0').publishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('asks for a scoped package as one path segment, and passes on only a commit as the ref', async () => {
    const info = await REGISTRY.npm.lookup('@acme/widgets', ctx());
    expect(fake.hitsOf('/npm/@acme%2fwidgets')).toBe(1);
    expect(info!.name).toBe('@acme/widgets');
    expect(info!.versions[0]!.repository).toEqual({ url: 'https://github.com/acme/widgets' });
  });

  it('sends the token npm has for the registry, to the registry only, and never shows it', async () => {
    await REGISTRY.npm.lookup('docs-kit', ctx());
    expect(fake.requests.map((r) => r.authorization)).toEqual([`Bearer ${TOKEN}`]);
    expect(await registryHeaders('npm', `${fake.npmRegistry}docs-kit/-/docs-kit-1.0.0.tgz`)).toEqual({ authorization: `Bearer ${TOKEN}` });
    expect(await registryHeaders('npm', `${other.url}/npm/far-away/-/far-away-1.0.0.tgz`)).toEqual({});
    fake.fail('/npm/', 403);
    const err = await failure(REGISTRY.npm.lookup('docs-kit', ctx()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.code).toBe('REGISTRY_ERROR');
    expect(err.message).not.toContain(TOKEN);
  });

  it('publishing a new version is seen by the next lookup', async () => {
    await fake.publish('npm', 'docs-kit', '1.11.0', { 'README.md': '# eleven' });
    const info = await REGISTRY.npm.lookup('docs-kit', ctx());
    expect(info!.latest).toBe('1.11.0');
  });

  it('a redirect to another origin gets no token, and one to an address the guard refuses is not followed', async () => {
    fake.redirect('/npm/far-away', `${other.url}/npm/far-away`);
    const err = await failure(REGISTRY.npm.lookup('far-away', ctx()));
    expect(err.code).toBe('ADDRESS_NOT_ALLOWED');
    expect(other.requests).toHaveLength(0);
    const both = new OutboundGuard(loadConfig({ OUTBOUND_ALLOW: '127.0.0.1,127.0.0.2' }).outbound);
    try {
      expect((await REGISTRY.npm.lookup('far-away', ctx(both)))!.latest).toBe('1.0.0');
      expect(fake.requests[1]!.authorization).toBe(`Bearer ${TOKEN}`);
      expect(other.requests).toEqual([expect.objectContaining({ path: '/npm/far-away', authorization: undefined })]);
    } finally {
      other.requests.length = 0;
      await both.close();
    }
  });

  it('an archive that the metadata puts at an address the guard refuses is not fetched', async () => {
    const info = await REGISTRY.npm.lookup('far-away', ctx());
    const url = info!.versions[0]!.archive!.url;
    expect(url.startsWith(other.url)).toBe(true);
    const call = { signal: new AbortController().signal, deadline: Date.now() + 5000 };
    const err = await failure(request('The archive', url, { headers: await registryHeaders('npm', url) }, call, { guard }));
    expect(err.code).toBe('ADDRESS_NOT_ALLOWED');
    expect(other.requests).toHaveLength(0);
  });
});

describe('PyPI', () => {
  it('reads the simple API (PEP 691): names normalised, PEP 440 order, yanked releases, sdists first, upload times', async () => {
    const info = await lookupPackage('pypi', 'py.docs_KIT', ctx());
    expect(fake.hitsOf('/pypi/simple/py-docs-kit/')).toBe(1);
    expect(fake.requests[0]!.accept).toContain('application/vnd.pypi.simple.v1+json');
    expect(info!.name).toBe('py-docs-kit');
    expect(info!.versions.map((v) => v.version)).toEqual(['1.2', '1.3', '1.10', '1.11', '2.0rc1']);
    expect(info!.latest).toBe('1.10');
    expect(version(info, '1.11').yanked).toBe(true);
    const sdist = version(info, '1.10').archive!;
    expect(sdist).toMatchObject({ kind: 'tgz' });
    expect(sdist.url).toMatch(/py_docs_kit-1\.10\.tar\.gz$/);
    expect(sdist.sha256).toBe(sha('sha256', await download(sdist.url)));
    expect(version(info, '1.3').archive).toMatchObject({ kind: 'zip', url: expect.stringMatching(/-py3-none-any\.whl$/) });
    expect(version(info, '1.2').publishedAt).toMatch(/^\d{4}-/);
  });

  it('finds the repository and summary in the JSON API beside the index', async () => {
    const info = await REGISTRY.pypi.lookup('py-docs-kit', ctx());
    expect(fake.hitsOf('/pypi/pypi/py-docs-kit/json')).toBe(1);
    expect(info!.description).toBe('Docs for Python');
    expect(version(info, '1.2').repository).toEqual({ url: 'https://github.com/acme/py-docs' });
  });

  it('reads an index that only speaks HTML (PEP 503, data-yanked of PEP 592, relative links)', async () => {
    fake.pypiHtmlOnly = true;
    const info = await REGISTRY.pypi.lookup('Py-Docs-Kit', ctx());
    expect(info!.versions.map((v) => v.version)).toEqual(['1.2', '1.3', '1.10', '1.11', '2.0rc1']);
    expect(version(info, '1.11').yanked).toBe(true);
    expect(info!.latest).toBe('1.10');
    const sdist = version(info, '1.10').archive!;
    expect(sdist.url).toBe(`${fake.url}/pypi/files/py-docs-kit/py_docs_kit-1.10.tar.gz`);
    expect(sdist.sha256).toBe(sha('sha256', await download(sdist.url)));
  });

  it('a mirror without the JSON API still answers, without a repository', async () => {
    fake.fail('/pypi/pypi/', 404);
    const info = await REGISTRY.pypi.lookup('py-docs-kit', ctx());
    expect(info!.latest).toBe('1.10');
    expect(info!.versions[0]!.repository).toBeNull();
  });
});

describe('crates', () => {
  it('reads the sparse index at paths by name length', async () => {
    for (const name of ['a', 'ab', 'abc']) expect((await REGISTRY.crates.lookup(name, ctx()))!.latest).toBe('0.1.0');
    expect(fake.hitsOf('/crates/index/1/a')).toBe(1);
    expect(fake.hitsOf('/crates/index/2/ab')).toBe(1);
    expect(fake.hitsOf('/crates/index/3/a/abc')).toBe(1);
  });

  it('reads versions, yanked ones, checksums, download URLs and the repository from the web API', async () => {
    const info = await lookupPackage('crates', 'serde_docs', ctx());
    expect(fake.hitsOf('/crates/index/se/rd/serde_docs')).toBe(1);
    expect(info!.name).toBe('Serde_Docs');
    expect(info!.versions.map((v) => [v.version, v.yanked])).toEqual([['1.0.0', false], ['1.1.0', true], ['1.2.0-alpha.1', false]]);
    expect(info!.latest).toBe('1.0.0');
    expect(info!.description).toBe('Serde docs');
    const v = version(info, '1.0.0');
    expect(v.repository).toEqual({ url: 'https://github.com/acme/serde-docs' });
    expect(v.archive!.url).toBe(`${fake.url}/crates/api/v1/crates/Serde_Docs/1.0.0/download`);
    expect(v.archive!.sha256).toBe(sha('sha256', await download(v.archive!.url)));
  });

  it('fills in the markers of `dl`', async () => {
    fake.cratesDlMarkers = true;
    const v = (await REGISTRY.crates.lookup('serde_docs', ctx()))!.versions[0]!;
    expect(v.archive!.url).toBe(`${fake.url}/crates/files/se/rd/Serde_Docs/Serde_Docs-1.0.0.crate`);
    expect(v.archive!.sha256).toBe(sha('sha256', await download(v.archive!.url)));
  });

  it("reads the repository from a crate's Cargo.toml", () => {
    expect(crateRepositoryFromManifest('[package]\nname = "x"\nrepository = "https://gitlab.com/g/sub/x.git"\n')).toBe('https://gitlab.com/g/sub/x');
    expect(crateRepositoryFromManifest('[package]\nname = "x"\nrepository.workspace = true\n')).toBeNull();
    expect(crateRepositoryFromManifest('[package\nname = ')).toBeNull();
  });

  it('an index without config.json is not a sparse index', async () => {
    fake.fail('/crates/index/config.json', 404);
    const err = await failure(REGISTRY.crates.lookup('abc', ctx()));
    expect(err.code).toBe('REGISTRY_RESPONSE_INVALID');
  });
});

describe('failures', () => {
  const clients = { npm: ['docs-kit', '/npm/'], pypi: ['py-docs-kit', '/pypi/simple/'], crates: ['abc', '/crates/index/'] } as const;

  it('an unknown package is null', async () => {
    for (const [eco, name] of [['npm', 'no-such-pkg'], ['npm', '@acme/nothing'], ['pypi', 'no-such-pkg'], ['crates', 'no-such-crate']] as const) {
      expect(await lookupPackage(eco, name, ctx()), `${eco} ${name}`).toBeNull();
    }
  });

  it('a registry answering 500 is recoverable', async () => {
    for (const [eco, [name, prefix]] of Object.entries(clients)) {
      fake.fail(prefix, 500);
      const err = await failure(REGISTRY[eco as keyof typeof clients].lookup(name, ctx()));
      expect(err, eco).toBeInstanceOf(RecoverableError);
    }
  });

  it('a registry that never answers is a recoverable timeout, within the deadline', async () => {
    const short = { npm: npmRegistry({ timeoutMs: 300 }), pypi: pypiRegistry({ timeoutMs: 300 }), crates: cratesRegistry({ timeoutMs: 300 }) };
    for (const [eco, [name, prefix]] of Object.entries(clients)) {
      fake.hang(prefix);
      const started = Date.now();
      const err = await failure(short[eco as keyof typeof clients].lookup(name, ctx()));
      expect(err, eco).toBeInstanceOf(RecoverableError);
      expect(err.message).toMatch(/did not answer within/);
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });

  it('a malformed document is permanent, and so is an oversized one', async () => {
    for (const [eco, [name, prefix]] of Object.entries(clients)) {
      if (eco === 'crates') continue; // an index line that is not JSON is skipped, as cargo does: below
      fake.malformed(prefix);
      const err = await failure(REGISTRY[eco as keyof typeof clients].lookup(name, ctx()));
      expect(err, eco).toBeInstanceOf(PermanentError);
      expect(err.code).toBe('REGISTRY_RESPONSE_INVALID');
    }
    fake.clearFaults();
    fake.malformed('/crates/index/3/');
    expect((await failure(REGISTRY.crates.lookup('abc', ctx()))).code).toBe('REGISTRY_RESPONSE_INVALID');
    const tiny = await failure(npmRegistry({ maxBytes: 100 }).lookup('docs-kit', ctx()));
    expect(tiny.code).toBe('REGISTRY_RESPONSE_INVALID');
    expect(tiny.message).toMatch(/larger than 100 bytes/);
  });

  it('a registry at an address the guard refuses is never reached', async () => {
    const strict = new OutboundGuard(loadConfig({ OUTBOUND_ALLOW: '127.0.0.2' }).outbound);
    try {
      const err = await failure(REGISTRY.npm.lookup('docs-kit', ctx(strict)));
      expect(err.code).toBe('ADDRESS_NOT_ALLOWED');
      expect(fake.requests).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

describe('package names', () => {
  it('takes each ecosystem\'s names', () => {
    for (const [eco, name] of [['npm', 'react'], ['npm', '@types/node'], ['npm', 'JSONStream'], ['npm', 'lodash.merge'], ['pypi', 'Django'], ['pypi', 'zope.interface'], ['pypi', 'typing_extensions'], ['crates', 'serde_json'], ['crates', 'tokio']] as const) {
      expect(validPackageName(eco, name)).toBe(name);
    }
  });

  it('refuses NUL, whitespace, `..`, paths and over-long names with INVALID_PACKAGE_NAME, before any request', async () => {
    const bad: [Parameters<typeof validPackageName>[0], string][] = [
      ['npm', 'a\u0000b'], ['npm', 'a b'], ['npm', '../etc/passwd'], ['npm', '@scope/../x'], ['npm', '.hidden'], ['npm', 'a/b'], ['npm', 'x'.repeat(215)], ['npm', ''],
      ['pypi', 'a..b'], ['pypi', '-lead'], ['pypi', 'a/b'], ['pypi', 'trail-'], ['crates', '1abc'], ['crates', 'a.b'], ['crates', 'x'.repeat(65)],
    ];
    for (const [eco, name] of bad) {
      const err = (() => {
        try {
          validPackageName(eco, name);
        } catch (e) {
          return e as ValidationError;
        }
        return undefined;
      })();
      expect(err, `${eco} ${JSON.stringify(name)}`).toBeInstanceOf(ValidationError);
      expect(err!.code).toBe('INVALID_PACKAGE_NAME');
    }
    await expect(lookupPackage('npm', '../x', ctx())).rejects.toMatchObject({ code: 'INVALID_PACKAGE_NAME' });
    expect(fake.requests).toHaveLength(0);
  });
});
