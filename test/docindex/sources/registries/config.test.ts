import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redact } from '../../../../core/redact.js';
import { FakeRegistries } from '../../../../fakes/fake-registries.js';
import {
  cargoDefaultIndex,
  headersFor,
  indexFromCargoConfig,
  indexUrlFromPipConfig,
  parseNpmrc,
  readCargoEndpoint,
  readNpmEndpoint,
  readPipEndpoint,
} from '../../../../docindex/sources/registries/config.js';

/**
 * Where the registries are, read from each ecosystem's own configuration (docindex/sources/registries/config.ts):
 * npm's settings and .npmrc tokens, pip's index URL and its credentials, cargo's source replacement; credentials
 * only for the registry's origin, and masked wherever they would be shown.
 */
let fake: FakeRegistries;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-config-'));
const base = { PATH: process.env.PATH, HOME: scratch };

beforeAll(async () => {
  fake = await FakeRegistries.start();
});
afterAll(async () => {
  await fake?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const has = (cmd: string) => {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe('npm', () => {
  it("reads npm's registry setting and the token its .npmrc has for it", async () => {
    const found = await readNpmEndpoint({ ...base, ...fake.npmEnv('tok-123456789') });
    expect(found).toEqual({ endpoint: { url: fake.npmRegistry, headers: { authorization: 'Bearer tok-123456789' } } });
    expect(redact('failed with tok-123456789')).not.toContain('tok-123456789');
  });

  it("takes a token for the registry's host for its paths too, and expands ${VARS}", async () => {
    const rc = path.join(scratch, 'host-npmrc');
    const host = new URL(fake.url).host;
    fs.writeFileSync(rc, `registry=${fake.npmRegistry}\n//other.invalid/:_authToken=wrong-token\n//${host}/:_authToken=\${MY_NPM_TOKEN}\n`);
    const found = await readNpmEndpoint({ ...base, npm_config_userconfig: rc, npm_config_globalconfig: path.join(scratch, 'none'), MY_NPM_TOKEN: 'from-env-9876' });
    expect(found).toEqual({ endpoint: { url: fake.npmRegistry, headers: { authorization: 'Bearer from-env-9876' } } });
  });

  it('without npm, the environment still names the registry', async () => {
    const found = await readNpmEndpoint({ PATH: scratch, npm_config_registry: `${fake.url}/npm` });
    expect(found).toEqual({ endpoint: { url: fake.npmRegistry } });
  });

  it('parses .npmrc lines', () => {
    const rc = parseNpmrc('; comment\n# comment\nregistry = "http://r.invalid/"\n//r.invalid/:_authToken=${T}\nbroken line\n', { T: 'x' });
    expect([...rc]).toEqual([['registry', 'http://r.invalid/'], ['//r.invalid/:_authToken', 'x']]);
  });
});

describe('pip', () => {
  it('takes PIP_INDEX_URL, its credentials as a header for its own origin only, masked', async () => {
    const found = await readPipEndpoint({ ...base, ...fake.pipEnv({ user: 'reader', password: 'pip-secret-42' }) });
    if (!('endpoint' in found)) throw new Error(found.unavailable);
    expect(found.endpoint.url).toBe(fake.pypiIndex);
    const basic = `Basic ${Buffer.from('reader:pip-secret-42').toString('base64')}`;
    expect(headersFor(`${fake.url}/pypi/files/x.tar.gz`, found.endpoint)).toEqual({ authorization: basic });
    expect(headersFor('http://127.0.0.2:1/x.tar.gz', found.endpoint)).toEqual({});
    expect(redact('pip-secret-42 and reader:pip-secret-42')).not.toContain('pip-secret-42');
  });

  it.skipIf(!has('python3'))("reads pip's configuration files, the install command's setting first", async () => {
    const conf = path.join(scratch, 'pip.conf');
    fs.writeFileSync(conf, '[global]\nindex-url = http://127.0.0.1:1/global/simple/\n[install]\nindex-url = http://127.0.0.1:1/install/simple/\n');
    expect(await readPipEndpoint({ ...base, PIP_CONFIG_FILE: conf })).toEqual({ endpoint: { url: 'http://127.0.0.1:1/install/simple/' } });
  });

  it.skipIf(!has('python3'))("asks pip for its default index when nothing is configured", async () => {
    const found = await readPipEndpoint({ ...base, PIP_CONFIG_FILE: os.devNull });
    if (!('endpoint' in found)) throw new Error(found.unavailable);
    expect(found.endpoint.url).toMatch(/^https:\/\/[^/]+\/simple\/$/);
  });

  it('reads `pip config list`', () => {
    expect(indexUrlFromPipConfig("global.index-url='http://a.invalid/simple'\n")).toBe('http://a.invalid/simple');
    expect(indexUrlFromPipConfig("global.cert='x'\n")).toBeUndefined();
  });
});

describe('cargo', () => {
  it("follows config.toml's source replacement to a sparse index", async () => {
    expect(await readCargoEndpoint({ ...base, CARGO_HOME: fake.cargoHome() })).toEqual({ endpoint: { url: `${fake.url}/crates/index/` } });
    expect(indexFromCargoConfig('[source.crates-io]\nreplace-with = "a"\n[source.a]\nreplace-with = "b"\n[registries.b]\nindex = "sparse+http://m.invalid/i/"\n')).toBe('sparse+http://m.invalid/i/');
    expect(indexFromCargoConfig('[registries.crates-io]\nindex = "sparse+http://m.invalid/"\n')).toBe('sparse+http://m.invalid/');
    expect(indexFromCargoConfig('[source.crates-io]\nreplace-with = "a"\n[source.a]\nreplace-with = "crates-io"\n')).toBeUndefined();
  });

  it('takes CARGO_REGISTRIES_CRATES_IO_INDEX, and says a git index is not supported', async () => {
    expect(await readCargoEndpoint({ ...base, CARGO_REGISTRIES_CRATES_IO_INDEX: `sparse+${fake.url}/x` })).toEqual({ endpoint: { url: `${fake.url}/x/` } });
    const git = await readCargoEndpoint({ ...base, CARGO_REGISTRIES_CRATES_IO_INDEX: 'https://git.invalid/index' });
    expect(git).toEqual({ unavailable: expect.stringMatching(/git index, which is not supported.*CARGO_REGISTRIES_CRATES_IO_INDEX/) });
  });

  it('says when config.toml is not TOML', async () => {
    const home = path.join(scratch, 'broken-cargo-home');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, 'config.toml'), '[source.crates-io\n');
    expect(await readCargoEndpoint({ ...base, CARGO_HOME: home })).toEqual({ unavailable: expect.stringMatching(/config\.toml is not valid TOML/) });
  });

  it.skipIf(!has('cargo'))("asks cargo for its own default index, without reaching the network", async () => {
    // rustup's cargo finds its toolchain from the real home folder
    const found = await cargoDefaultIndex({ PATH: process.env.PATH, HOME: os.homedir() });
    expect(found).toMatch(/^sparse\+https:\/\/[^/]+\/$/);
  });

  it('without cargo and without configuration, the crates registry is not configured, and the message says how to name one', async () => {
    const found = await readCargoEndpoint({ PATH: scratch, HOME: scratch, CARGO_HOME: path.join(scratch, 'nothing') });
    expect(found).toEqual({ unavailable: expect.stringMatching(/names no crates-io index.*CARGO_REGISTRIES_CRATES_IO_INDEX/) });
  });
});
