import { describe, expect, it } from 'vitest';
import { AppError, PayloadTooLargeError, ValidationError } from '../../../core/errors.js';
import { LIMITS, type LockfileFormat, parseLockfile } from '../../../docindex/lockfiles/index.js';
import { fixture } from './helpers.js';

const FIXTURES: [string, LockfileFormat][] = [
  ['package-lock-v1.json', 'package-lock.json'],
  ['package-lock-v2.json', 'package-lock.json'],
  ['package-lock-v3.json', 'package-lock.json'],
  ['pnpm-lock-v5.yaml', 'pnpm-lock.yaml'],
  ['pnpm-lock-v6.yaml', 'pnpm-lock.yaml'],
  ['pnpm-lock-v9.yaml', 'pnpm-lock.yaml'],
  ['yarn-v1.lock', 'yarn.lock'],
  ['yarn-berry.lock', 'yarn.lock'],
  ['package-manifest.json', 'package.json'],
  ['pip-compiled.txt', 'requirements.txt'],
  ['poetry-1.8.lock', 'poetry.lock'],
  ['poetry-1.1.lock', 'poetry.lock'],
  ['uv-rev2.lock', 'uv.lock'],
  ['pyproject-pep621.toml', 'pyproject.toml'],
  ['pyproject-poetry.toml', 'pyproject.toml'],
  ['Cargo-v1.lock', 'Cargo.lock'],
  ['Cargo-v3.lock', 'Cargo.lock'],
  ['Cargo-v4.lock', 'Cargo.lock'],
  ['Cargo-manifest.toml', 'Cargo.toml'],
];

/** What parsing ends in: the format read, or the error's class and code. Anything but our errors fails the test. */
function outcome(fileName: string | undefined, content: string, manifest?: string): string {
  try {
    return parseLockfile({ fileName, content, ...(manifest !== undefined && { manifest }) }).format;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return `${err.constructor.name} ${err.code}`;
  }
}

describe('detection', () => {
  it.each(FIXTURES)('%s is read as %s by its content alone', (name, format) => {
    expect(parseLockfile({ content: fixture(name) }).format).toBe(format);
  });

  it.each([
    ['Package-Lock.json', 'package-lock.json'],
    ['npm-shrinkwrap.json', 'package-lock.json'],
    ['apps/web/PNPM-LOCK.YAML', 'pnpm-lock.yaml'],
    ['C:\\src\\shop\\yarn.lock', 'yarn.lock'],
    ['dev-requirements.txt', 'requirements.txt'],
    ['requirements.in', 'requirements.txt'],
    ['CARGO.LOCK', 'Cargo.lock'],
    ['cargo.toml', 'Cargo.toml'],
  ])('the name %s says %s', (fileName, format) => {
    const content = { 'package-lock.json': fixture('package-lock-v3.json'), 'pnpm-lock.yaml': fixture('pnpm-lock-v9.yaml'), 'yarn.lock': fixture('yarn-v1.lock'), 'requirements.txt': 'django==5.0.6\n', 'Cargo.lock': fixture('Cargo-v4.lock'), 'Cargo.toml': fixture('Cargo-manifest.toml') }[format];
    expect(outcome(fileName, content ?? '')).toBe(format);
  });

  it('the name wins over the content: a yarn.lock sent as package-lock.json is invalid JSON', () => {
    expect(outcome('package-lock.json', fixture('yarn-v1.lock'))).toBe('ValidationError LOCKFILE_INVALID');
  });

  it('a name that says nothing (requirements/base.txt, deps.lock) falls back to the content', () => {
    expect(outcome('requirements/base.txt', 'django==5.0.6\nrequests>=2\n')).toBe('requirements.txt');
    expect(outcome('deps.lock', fixture('Cargo-v3.lock'))).toBe('Cargo.lock');
  });

  it.each([
    ['notes.md', '# Release notes\n\nThis release fixes the parser.\n'],
    [undefined, 'Dear team, here is the lockfile you asked for.'],
    [undefined, ''],
    [undefined, 'key = "value"\n'],
    ['Gemfile.lock', 'GEM\n  remote: http://127.0.0.1/\n  specs:\n    rake (13.2.1)\n'],
  ])('%s with content that is no format read here is LOCKFILE_UNSUPPORTED', (fileName, content) => {
    expect(outcome(fileName, content)).toBe('ValidationError LOCKFILE_UNSUPPORTED');
  });
});

describe('malformed files say where', () => {
  it.each([
    ['package-lock.json', '{\n  "lockfileVersion": 3,\n  "packages": {\n    "": { "dependencies": { "a": "^1" }\n', /package-lock\.json is not valid: .*\(line \d+, column \d+\)|end of JSON/],
    ['package-lock.json', '[1, 2, 3]', /the top level is not a mapping/],
    ['pnpm-lock.yaml', "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      a: {specifier: ^1, version: [1.0.0\n", /pnpm-lock\.yaml is not valid: .*line \d+/],
    ['pnpm-lock.yaml', "lockfileVersion: '9.0'\nimporters: {}\nimporters: {}\n", /unique/],
    ['poetry.lock', '[[package]]\nname = "a"\nversion = \n', /poetry\.lock is not valid: .*line 3/],
    ['uv.lock', 'version = 1\n[[package]\n', /uv\.lock is not valid: .*line 2/],
    ['Cargo.lock', 'version = 3\n[[package]]\nname = "a"\nname = "b"\n', /Cargo\.lock is not valid: .*line 4/],
  ])('%s: %j', (fileName, content, message) => {
    expect(() => parseLockfile({ fileName, content })).toThrow(ValidationError);
    expect(() => parseLockfile({ fileName, content })).toThrow(message);
  });

  it('a malformed manifest sent along is LOCKFILE_INVALID too', () => {
    expect(outcome('yarn.lock', fixture('yarn-v1.lock'), '{ "dependencies": ')).toBe('ValidationError LOCKFILE_INVALID');
  });
});

describe('limits', () => {
  it('a file over 10 MB is PayloadTooLargeError LOCKFILE_TOO_LARGE, counted in UTF-8 bytes', () => {
    expect(outcome('requirements.txt', 'a'.repeat(LIMITS.maxBytes + 1))).toBe('PayloadTooLargeError LOCKFILE_TOO_LARGE');
    // Fewer characters than the limit, more bytes.
    expect(outcome('requirements.txt', '#é'.repeat(LIMITS.maxBytes / 2.5))).toBe('PayloadTooLargeError LOCKFILE_TOO_LARGE');
    expect(outcome('yarn.lock', fixture('yarn-v1.lock'), ' '.repeat(LIMITS.maxBytes + 1))).toBe('PayloadTooLargeError LOCKFILE_TOO_LARGE');
  });

  it('more than 20,000 dependencies is LOCKFILE_TOO_LARGE; 20,000 is fine', () => {
    const requirements = (n: number) => Array.from({ length: n }, (_, i) => `pkg${i}==1.0.${i}`).join('\n');
    expect(parseLockfile({ fileName: 'requirements.txt', content: requirements(LIMITS.maxDependencies) }).dependencies).toHaveLength(LIMITS.maxDependencies);
    expect(() => parseLockfile({ fileName: 'requirements.txt', content: requirements(LIMITS.maxDependencies + 1) })).toThrow(PayloadTooLargeError);
  });

  it('warnings stop at 50, and the rest are counted', () => {
    const result = parseLockfile({ fileName: 'requirements.txt', content: '-r other.txt\n'.repeat(1000) });
    expect(result.warnings).toHaveLength(LIMITS.maxWarnings + 1);
    expect(result.warnings.at(-1)).toBe('950 more warnings');
  });
});

describe('hostile input', () => {
  it('a NUL byte is LOCKFILE_INVALID, naming its line', () => {
    expect(() => parseLockfile({ fileName: 'package-lock.json', content: '{\n"a": "\0"}' })).toThrow(/NUL byte at line 2/);
    expect(outcome('requirements.txt', 'django==5.0.6\0\n')).toBe('ValidationError LOCKFILE_INVALID');
  });

  it('a YAML alias bomb is refused, quickly', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i += 1) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const content = `lockfileVersion: '9.0'\n${levels.join('\n')}\nimporters: {}\n`;
    const started = Date.now();
    expect(outcome('pnpm-lock.yaml', content)).toBe('ValidationError LOCKFILE_INVALID');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('deep nesting in every syntax ends in a result or LOCKFILE_INVALID, never a crash', () => {
    const depth = 100_000;
    expect(outcome('package-lock.json', `{"lockfileVersion":3,"packages":{"":{"dependencies":${'['.repeat(depth)}${']'.repeat(depth)}}}}`)).toBe('package-lock.json');
    expect(outcome('pnpm-lock.yaml', `lockfileVersion: '9.0'\nimporters: ${'['.repeat(depth)}${']'.repeat(depth)}\n`)).toBe('ValidationError LOCKFILE_INVALID');
    expect(outcome('Cargo.lock', `version = 3\nx = ${'['.repeat(depth)}${']'.repeat(depth)}\n`)).toBe('ValidationError LOCKFILE_INVALID');
    const nested = Array.from({ length: 2000 }, (_, i) => `${'  '.repeat(i)}a${i}:`).join('\n');
    expect(outcome('yarn.lock', `__metadata:\n  version: 8\n${nested}\n`)).toMatch(/^(yarn\.lock|ValidationError LOCKFILE_INVALID)$/);
  });

  it('prototype keys are never looked up through the prototype, nor reported as packages', () => {
    const lock = `{"lockfileVersion":3,"packages":{"":{"dependencies":{"__proto__":"^1","constructor":"^1","toString":"^1"}},"node_modules/__proto__":{"version":"1.0.0"}}}`;
    const result = parseLockfile({ fileName: 'package-lock.json', content: lock });
    expect(result.dependencies).toEqual([
      { name: 'constructor', version: null, range: '^1', dev: false },
      { name: 'toString', version: null, range: '^1', dev: false },
    ]);
    expect(result.warnings).toContain('"__proto__" is not a valid npm package name: skipped');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    const manifest = JSON.stringify({ dependencies: { constructor: '^1', hasOwnProperty: '^1' } });
    const yarn = parseLockfile({ fileName: 'yarn.lock', content: '# yarn lockfile v1\n\n__proto__@^1:\n  version "1.0.0"\n', manifest });
    expect(yarn.dependencies.map((d) => d.version)).toEqual([null, null]);

    const pnpm = parseLockfile({ fileName: 'pnpm-lock.yaml', content: "lockfileVersion: '9.0'\nimporters:\n  __proto__:\n    polluted: true\n  .:\n    dependencies:\n      constructor: {specifier: ^1, version: 1.0.0}\n" });
    expect(pnpm.dependencies).toEqual([{ name: 'constructor', version: '1.0.0', range: '^1', dev: false }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names and versions a registry would not accept are skipped or dropped with a warning', () => {
    const lock = JSON.stringify({
      lockfileVersion: 3,
      packages: {
        '': { dependencies: { '../../etc/passwd': '^1', good: '^1' } },
        'node_modules/../../etc/passwd': { version: '1.0.0' },
        'node_modules/good': { version: '1.0.0; curl http://127.0.0.1/x | sh' },
      },
    });
    const result = parseLockfile({ fileName: 'package-lock.json', content: lock });
    expect(result.dependencies).toEqual([{ name: 'good', version: null, range: '^1', dev: false }]);
    expect(result.warnings).toEqual([
      '"../../etc/passwd" is not a valid npm package name: skipped',
      'good: version "1.0.0; curl http://127.0.0.1/x | sh" is not a npm version: reported without one',
    ]);
  });

  it('pathological lines take linear time', () => {
    const started = Date.now();
    expect(outcome(undefined, `${'\n'.repeat(4_000_000)}${' '.repeat(4_000_000)}`)).toBe('ValidationError LOCKFILE_UNSUPPORTED');
    expect(outcome('requirements.txt', `${'a.'.repeat(2_000_000)}!`)).toBe('requirements.txt');
    expect(outcome('requirements.txt', `a${' '.repeat(4_000_000)}#`)).toBe('requirements.txt');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
