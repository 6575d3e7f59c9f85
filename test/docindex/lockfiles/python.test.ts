import { describe, expect, it } from 'vitest';
import { parseLockfile } from '../../../docindex/lockfiles/index.js';
import { parseRequirement } from '../../../docindex/lockfiles/pep508.js';
import { fixture, lines, parseFixture } from './helpers.js';

describe('requirements.txt', () => {
  it('pins give versions, other specifiers ranges; names PEP 503-normalised; continuations, comments, hashes and markers read', () => {
    const result = parseFixture('requirements.txt', 'pip-compiled.txt');
    expect(result.ecosystem).toBe('pypi');
    expect(lines(result)).toEqual([
      'celery@- (~=5.4)',
      'django@5.0.6 (==5.0.6)',
      'flask@- (==3.*)',
      'numpy@1.26.4 (===1.26.4)',
      'pydantic@2.7.1 (==2.7.1)',
      'requests@- (>=2.31,<3)',
      'ruamel-yaml-clib@0.2.8 (==0.2.8)',
      'sqlalchemy@-',
      'zope-interface@6.4 (==6.4)',
    ]);
  });

  it('skips includes, editables, URLs and paths with a warning that never repeats a URL', () => {
    const result = parseFixture('requirements.txt', 'pip-compiled.txt');
    expect(result.warnings).toEqual([
      'line 10: -r includes another file, which is not read',
      'line 11: -c includes another file, which is not read',
      'line 12: an editable requirement (-e) is skipped',
      'line 26: mylib is required from a URL, skipped',
      'line 27: a requirement by URL or path is skipped',
      'line 28: a requirement by URL or path is skipped',
      'line 29: a requirement by URL or path is skipped',
      'line 30: not a requirement, skipped',
    ]);
    expect(result.warnings.join('\n')).not.toMatch(/secret|token|127\.0\.0\.1/);
  });

  it('a file named for development or tests lists development dependencies', () => {
    const content = 'pytest==8.2.1\n';
    expect(parseLockfile({ fileName: 'requirements-dev.txt', content }).dependencies[0]?.dev).toBe(true);
    expect(parseLockfile({ fileName: 'reqs/test-requirements.txt', content }).dependencies[0]?.dev).toBe(true);
    expect(parseLockfile({ fileName: 'requirements.txt', content }).dependencies[0]?.dev).toBe(false);
  });

  it.each([
    ['requests==2.31.0', { name: 'requests', specifier: '==2.31.0', exact: '2.31.0', url: false }],
    ['requests [socks, security] == 2.31.0 ; sys_platform == "linux"', { name: 'requests', specifier: '==2.31.0', exact: '2.31.0', url: false }],
    ['requests (>=2.0, <3)', { name: 'requests', specifier: '>=2.0,<3', url: false }],
    ['requests==2.*', { name: 'requests', specifier: '==2.*', url: false }],
    ['requests @ file:///tmp/requests.whl', { name: 'requests', url: true }],
    ['requests', { name: 'requests', url: false }],
    ['requests is great', null],
    ['==2.0', null],
  ])('parseRequirement(%j)', (line, expected) => {
    expect(parseRequirement(line)).toEqual(expected);
  });
});

describe('poetry.lock', () => {
  it('alone: every package from a registry, with a warning; git and folder packages skipped', () => {
    const result = parseFixture('poetry.lock', 'poetry-1.8.lock');
    expect(lines(result)).toEqual(['asgiref@3.8.1', 'black@24.4.2', 'django@5.0.6', 'pytest@8.2.1', 'requests@2.31.0', 'ruamel-yaml@0.18.6']);
    expect(result.warnings).toEqual([
      expect.stringMatching(/poetry\.lock does not say which packages are direct.*send pyproject\.toml/),
      'internal-lib: installed from a URL or a local folder, not a registry: skipped',
      'other: installed from git, not a registry: skipped',
    ]);
  });

  it("with pyproject.toml: Poetry's main dependencies, groups and dev-dependencies pick the direct ones", () => {
    const result = parseFixture('poetry.lock', 'poetry-1.8.lock', 'pyproject-poetry.toml');
    expect(lines(result)).toEqual([
      'django@5.0.6 (^5.0)',
      'requests@2.31.0 (2.31.0)',
      'ruamel-yaml@0.18.6 (==0.18.6)',
      'dev black@24.4.2 (*)',
      'dev pytest@8.2.1 (^8.2)',
    ]);
  });

  it('lock-version 1.1: `category = "dev"` marks development packages', () => {
    expect(lines(parseFixture('poetry.lock', 'poetry-1.1.lock'))).toEqual(['asgiref@3.7.2', 'django@3.2.25', 'dev pytest@7.4.4']);
  });
});

describe('uv.lock', () => {
  it("the editable root's dependencies, extras and dev groups, with ranges from its metadata", () => {
    const result = parseFixture('uv.lock', 'uv-rev2.lock');
    expect(lines(result)).toEqual([
      'fastapi@0.111.0 (>=0.110)',
      // Forked by marker: both versions the project uses.
      'numpy@1.26.4 (>=1.26)',
      'numpy@2.0.0 (>=1.26)',
      'pydantic@2.7.1 (==2.7.1)',
      'redis@5.0.4 (>=5)',
      'dev pytest@8.2.1 (>=8)',
    ]);
    // starlette and annotated-types are transitive; shop-utils is a workspace member.
    expect(result.warnings).toEqual(['mylib: installed from git, a URL or a local folder, not a registry: skipped']);
  });

  it('a virtual workspace root names the direct ones too', () => {
    const content = fixture('uv-rev2.lock').replace('source = { editable = "." }', 'source = { virtual = "." }');
    expect(lines(parseLockfile({ fileName: 'uv.lock', content }))).toHaveLength(6);
  });
});

describe('pyproject.toml', () => {
  it('PEP 621 dependencies and extras, PEP 735 groups and uv dev-dependencies', () => {
    const result = parseFixture('pyproject.toml', 'pyproject-pep621.toml');
    expect(lines(result)).toEqual([
      'fastapi@- (>=0.110)',
      'pydantic@2.7.1 (==2.7.1)',
      'redis@- (>=5)',
      'sqlalchemy@- (>=2.0,<2.1)',
      'dev coverage@- (>=7)',
      'dev mypy@- (>=1.10)',
      'dev pytest@- (>=8)',
      'dev ruff@0.4.4 (==0.4.4)',
    ]);
    expect(result.warnings).toEqual(['mylib is required from a URL, skipped']);
  });

  it("Poetry's tables: a bare version pins, python is not a package, git and path sources skipped", () => {
    const result = parseFixture('pyproject.toml', 'pyproject-poetry.toml');
    expect(lines(result)).toEqual(['django@- (^5.0)', 'requests@2.31.0 (2.31.0)', 'ruamel-yaml@0.18.6 (==0.18.6)', 'dev black@- (*)', 'dev pytest@- (^8.2)']);
    expect(result.warnings).toHaveLength(2);
  });

  it('a malformed pyproject.toml says where', () => {
    expect(() => parseLockfile({ fileName: 'pyproject.toml', content: '[project]\ndependencies = ["a",\n' })).toThrow(
      expect.objectContaining({ code: 'LOCKFILE_INVALID', message: expect.stringMatching(/^pyproject\.toml is not valid: .*line/i) }),
    );
  });
});
