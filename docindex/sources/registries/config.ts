import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { redact, registerSecret } from '../../../core/redact.js';
import type { Ecosystem } from '../types.js';

/**
 * Where each ecosystem's registry is, read from that ecosystem's own configuration (npm's `registry` setting, pip's
 * index URL, cargo's source replacement), so the mirrors, proxies and credentials an install already has apply and
 * no registry host is written into Gristmill. Credentials become headers that go to the registry's own origin only,
 * and are registered as secrets (core/redact.ts) so no message or log line shows them.
 */
export interface RegistryEndpoint {
  /** npm: the registry; PyPI: the simple index; crates: the sparse index (without `sparse+`). Always ends with `/`. */
  url: string;
  /** Credentials, for requests to `url`'s origin only (see `headersFor`). */
  headers?: Record<string, string>;
}

/** The endpoint, or why there is none (a sentence for the job's error). */
export type EndpointResult = { endpoint: RegistryEndpoint } | { unavailable: string };

type Env = NodeJS.ProcessEnv;

const TOOL_TIMEOUT_MS = 20_000;

/** What a tool printed, and whether it succeeded (not installed, timed out or failed: `ok` is false). */
function run(cmd: string, args: string[], env: Env, cwd?: string): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, cwd, timeout: TOOL_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** A tool's output when it succeeded, else ''. */
const output = async (cmd: string, args: string[], env: Env) => {
  const r = await run(cmd, args, env);
  return r.ok ? r.stdout : '';
};

const withSlash = (u: string) => (u.endsWith('/') ? u : `${u}/`);

/** An http(s) URL without its userinfo, and the credentials that were in it (as a Basic header, a secret). */
function httpEndpoint(raw: string): RegistryEndpoint | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  let headers: Record<string, string> | undefined;
  if (u.username || u.password) {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    const basic = Buffer.from(`${user}:${pass}`).toString('base64');
    registerSecret(pass);
    registerSecret(basic);
    headers = { authorization: `Basic ${basic}` };
    u.username = '';
    u.password = '';
  }
  return { url: withSlash(u.href), ...(headers && { headers }) };
}

/** Credentials go only to the registry's own origin: never to a tarball or a page on another host. */
export function headersFor(url: string, endpoint: RegistryEndpoint): Record<string, string> {
  if (!endpoint.headers) return {};
  try {
    return new URL(url).origin === new URL(endpoint.url).origin ? endpoint.headers : {};
  } catch {
    return {};
  }
}

// ---- npm ----------------------------------------------------------------------------------------------------------

/** `${VAR}` in .npmrc values is the environment's, as npm reads it. */
const expandEnv = (value: string, env: Env) => value.replace(/\$\{([^}]+)\}/g, (_m, name: string) => env[name] ?? '');

/** The `key=value` lines of an .npmrc (ini without sections, which is all auth settings use). */
export function parseNpmrc(text: string, env: Env): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([^#;=\s][^=]*?)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const value = m[2]!.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
    out.set(m[1]!, expandEnv(value, env));
  }
  return out;
}

/** npm's keys for a registry's credentials: `//host/path/:_authToken`, from the registry's path up to its host. */
function nerfDarts(registry: string): string[] {
  const u = new URL(registry);
  const parts = u.pathname.split('/').filter(Boolean);
  const darts: string[] = [];
  for (let i = parts.length; i >= 0; i--) darts.push(`//${u.host}/${parts.slice(0, i).map((p) => `${p}/`).join('')}`);
  return darts;
}

/** The token npm has for `registry` in its config files (npm will not print it: `config get` calls it protected). */
async function npmAuth(registry: string, files: string[], env: Env): Promise<Record<string, string> | undefined> {
  const settings = new Map<string, string>();
  for (const file of files.reverse()) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    for (const [k, v] of parseNpmrc(text, env)) settings.set(k, v);
  }
  for (const dart of nerfDarts(registry)) {
    const token = settings.get(`${dart}:_authToken`);
    if (token) {
      registerSecret(token);
      return { authorization: `Bearer ${token}` };
    }
    const basic = settings.get(`${dart}:_auth`);
    if (basic) {
      registerSecret(basic);
      return { authorization: `Basic ${basic}` };
    }
  }
  return undefined;
}

/** npm's `registry` setting (`npm config list --json`: env, project, user and global .npmrc) and its token. */
export async function readNpmEndpoint(env: Env = process.env): Promise<EndpointResult> {
  // npm's warnings go to stderr; stdout is the JSON
  const out = await output('npm', ['config', 'list', '--json'], env);
  let settings: Record<string, unknown> = {};
  try {
    settings = out ? (JSON.parse(out) as Record<string, unknown>) : {};
  } catch {
    // an npm that does not answer JSON: only the environment is left
  }
  const raw = typeof settings.registry === 'string' ? settings.registry : (env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY);
  if (!raw) return { unavailable: 'npm is not installed and npm_config_registry is not set, so the npm registry is not known' };
  const endpoint = httpEndpoint(raw);
  if (!endpoint) return { unavailable: `npm's registry setting is not an http(s) URL` };
  const files = [settings.userconfig, settings.globalconfig].filter((f): f is string => typeof f === 'string');
  const auth = endpoint.headers ?? (await npmAuth(endpoint.url, files, env));
  return { endpoint: { url: endpoint.url, ...(auth && { headers: auth }) } };
}

// ---- PyPI ---------------------------------------------------------------------------------------------------------

/** `python3 -m pip config list` lines: `global.index-url='...'`; the install command's setting wins over global's. */
export function indexUrlFromPipConfig(listing: string): string | undefined {
  const found = new Map<string, string>();
  for (const line of listing.split(/\r?\n/)) {
    const m = /^([^=]+)\.index-url='(.*)'$/.exec(line.trim());
    if (m) found.set(m[1]!, m[2]!);
  }
  return found.get(':env:') ?? found.get('install') ?? found.get('global');
}

/** pip's own default index, asked from pip (its PyPI model), never written here. */
const PIP_DEFAULT = 'from pip._internal.models.index import PyPI; print(PyPI.simple_url)';

/** pip's index URL: PIP_INDEX_URL, else pip's configuration files, else pip's default. */
export async function readPipEndpoint(env: Env = process.env): Promise<EndpointResult> {
  const python = env.PYTHON ?? 'python3';
  let raw = env.PIP_INDEX_URL;
  if (!raw) raw = indexUrlFromPipConfig(await output(python, ['-m', 'pip', 'config', 'list'], env));
  if (!raw) raw = (await output(python, ['-c', PIP_DEFAULT], env)).trim();
  if (!raw) return { unavailable: 'pip is not installed and PIP_INDEX_URL is not set, so the PyPI index is not known' };
  const endpoint = httpEndpoint(raw);
  return endpoint ? { endpoint } : { unavailable: "pip's index URL is not an http(s) URL" };
}

// ---- crates -------------------------------------------------------------------------------------------------------

type Table = Record<string, unknown>;
const table = (v: unknown): Table => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Table) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** crates-io's index as cargo's config.toml names it: `[source.crates-io] replace-with`, or `[registries.crates-io]`. */
export function indexFromCargoConfig(text: string): string | undefined {
  const config = parseToml(text) as Table;
  const sources = table(config.source);
  const registries = table(config.registries);
  let name = 'crates-io';
  for (let hops = 0; hops < 8; hops++) {
    const source = table(sources[name]);
    const next = str(source['replace-with']);
    if (!next) return str(source.registry) ?? str(table(registries[name]).index);
    name = next;
  }
  return undefined; // a replacement loop: cargo refuses it too
}

/** The index $CARGO_HOME/config.toml names; throws a sentence when the file is not TOML. */
async function cargoConfigIndex(env: Env): Promise<string | undefined> {
  const home = env.CARGO_HOME ?? path.join(os.homedir(), '.cargo');
  for (const file of ['config.toml', 'config']) {
    const text = await fs.readFile(path.join(home, file), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    try {
      return indexFromCargoConfig(text);
    } catch {
      throw new Error(`cargo's ${path.join(home, file)} is not valid TOML`);
    }
  }
  return undefined;
}

/**
 * cargo's built-in crates-io index, asked from cargo itself: it resolves a dependency of a throwaway project through
 * a proxy that drops every connection, and names the URL it could not download (`config.json` of a sparse index).
 * Nothing leaves the machine.
 */
export async function cargoDefaultIndex(env: Env): Promise<string | undefined> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-cargo-'));
  const proxy = net.createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as net.AddressInfo).port;
    const manifest = '[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n[dependencies]\nprobe-dependency = "1"\n';
    await fs.writeFile(path.join(dir, 'Cargo.toml'), manifest);
    await fs.writeFile(path.join(dir, 'lib.rs'), '');
    const probeEnv = { ...env, CARGO_HOME: path.join(dir, 'home'), CARGO_HTTP_PROXY: `http://127.0.0.1:${port}`, CARGO_NET_RETRY: '0', CARGO_NET_OFFLINE: 'false', CARGO_TERM_COLOR: 'never' };
    const out = await run('cargo', ['generate-lockfile', '--manifest-path', path.join(dir, 'Cargo.toml')], probeEnv, dir);
    const m = /failed to download from `([^`]+?)config\.json`/.exec(out.stderr);
    return m ? `sparse+${m[1]}` : undefined;
  } finally {
    proxy.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const CARGO_HINT = 'name one in cargo\'s configuration: CARGO_REGISTRIES_CRATES_IO_INDEX, or `[source.crates-io] replace-with` in $CARGO_HOME/config.toml';

/** cargo's crates-io index: CARGO_REGISTRIES_CRATES_IO_INDEX, $CARGO_HOME/config.toml, else cargo's default. Sparse only. */
export async function readCargoEndpoint(env: Env = process.env): Promise<EndpointResult> {
  let configured: string | undefined;
  try {
    configured = env.CARGO_REGISTRIES_CRATES_IO_INDEX ?? (await cargoConfigIndex(env));
  } catch (err) {
    return { unavailable: (err as Error).message };
  }
  const raw = configured ?? (await cargoDefaultIndex(env));
  if (!raw) return { unavailable: `cargo's configuration names no crates-io index and cargo could not be asked for its default; ${CARGO_HINT}` };
  if (!raw.startsWith('sparse+')) return { unavailable: `cargo's crates-io index is a git index, which is not supported: only sparse indexes (sparse+https://...) are; ${CARGO_HINT}` };
  const endpoint = httpEndpoint(raw.slice('sparse+'.length));
  return endpoint ? { endpoint } : { unavailable: `cargo's crates-io index is not an http(s) URL; ${CARGO_HINT}` };
}

// ---- all ----------------------------------------------------------------------------------------------------------

const READERS: Record<Ecosystem, (env: Env) => Promise<EndpointResult>> = { npm: readNpmEndpoint, pypi: readPipEndpoint, crates: readCargoEndpoint };

const cache = new Map<Ecosystem, Promise<EndpointResult>>();

/** The ecosystem's registry as its configuration names it (read once per process), or why there is none. */
export function resolveEndpoint(ecosystem: Ecosystem): Promise<EndpointResult> {
  let found = cache.get(ecosystem);
  if (!found) {
    // a reader that fails (a folder it cannot write) leaves the registry unknown, said in its words
    found = READERS[ecosystem](process.env).catch((err: unknown) => ({ unavailable: `The ${ecosystem} registry could not be found: ${redact((err as Error).message)}` }));
    cache.set(ecosystem, found);
  }
  return found;
}

export async function registryEndpoint(ecosystem: Ecosystem): Promise<RegistryEndpoint | null> {
  const r = await resolveEndpoint(ecosystem);
  return 'endpoint' in r ? r.endpoint : null;
}

/** The credentials to send with a request to `url` (an archive's): the registry's, when `url` is on its origin. */
export async function registryHeaders(ecosystem: Ecosystem, url: string): Promise<Record<string, string>> {
  const endpoint = await registryEndpoint(ecosystem);
  return endpoint ? headersFor(url, endpoint) : {};
}

/** Forgets what was read, so the next lookup reads the configuration again (tests; a changed configuration). */
export function forgetRegistryEndpoints(): void {
  cache.clear();
}
