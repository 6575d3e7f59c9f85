import { describe, expect, it } from 'vitest';
import { defaultRepoConfig, type RepoConfig } from '../../../docindex/parse/config.js';
import { contentExclusion, DECLARATION_MAX_BYTES, selectFiles } from '../../../docindex/parse/select.js';

const config = (patch: Partial<RepoConfig> = {}): RepoConfig => ({ ...defaultRepoConfig(), ...patch });

function reasons(paths: string[], cfg: RepoConfig = config()): Record<string, string> {
  const sel = selectFiles(paths, cfg);
  return Object.fromEntries([...sel.included.map((p) => [p, 'included'] as const), ...sel.excluded.map((e) => [e.path, e.reason] as const)]);
}

describe('selectFiles: files that are never indexed', () => {
  it('skips build output, dependencies, VCS and hidden folders', () => {
    expect(
      reasons([
        '.git/HEAD.md',
        'node_modules/react/README.md',
        'vendor/github.com/x/y/doc.go',
        'dist/index.js',
        'packages/app/build/out.md',
        'target/doc/index.md',
        '.next/server/page.js',
        '.github/CONTRIBUTING.md',
        'docs/.vitepress/config.ts',
        'python/__pycache__/x.py',
        'docs/_build/html/index.rst',
        'src/.env.md',
        'src/index.ts',
      ]),
    ).toEqual({
      '.git/HEAD.md': 'inside hidden folder .git/',
      'node_modules/react/README.md': 'inside node_modules/',
      'vendor/github.com/x/y/doc.go': 'inside vendor/',
      'dist/index.js': 'inside dist/',
      'packages/app/build/out.md': 'inside build/',
      'target/doc/index.md': 'inside target/',
      '.next/server/page.js': 'inside hidden folder .next/',
      '.github/CONTRIBUTING.md': 'inside hidden folder .github/',
      'docs/.vitepress/config.ts': 'inside hidden folder .vitepress/',
      'python/__pycache__/x.py': 'inside __pycache__/',
      'docs/_build/html/index.rst': 'inside _build/',
      'src/.env.md': 'hidden file',
      'src/index.ts': 'included',
    });
  });

  it('skips non-indexable kinds, lock files, minified, bundled and generated files', () => {
    expect(
      reasons([
        'package.json',
        'package-lock.json',
        'yarn.lock',
        'Cargo.lock',
        'go.sum',
        'assets/logo.png',
        'Makefile',
        'public/vendor.min.js',
        'static/app.bundle.js',
        'api/service.pb.go',
        'api/service_pb2.py',
        'src/schema.generated.ts',
        'lib/model.g.dart',
        'requirements.txt',
        'requirements-dev.txt',
        'CMakeLists.txt',
        'docs/notes.txt',
        'src/min.ts',
      ]),
    ).toEqual({
      'package.json': 'not a documentation or source file',
      'package-lock.json': 'lock file',
      'yarn.lock': 'lock file',
      'Cargo.lock': 'lock file',
      'go.sum': 'lock file',
      'assets/logo.png': 'not a documentation or source file',
      Makefile: 'not a documentation or source file',
      'public/vendor.min.js': 'minified file',
      'static/app.bundle.js': 'bundled file',
      'api/service.pb.go': 'generated protobuf code',
      'api/service_pb2.py': 'generated protobuf code',
      'src/schema.generated.ts': 'generated file',
      'lib/model.g.dart': 'generated file',
      'requirements.txt': 'not documentation',
      'requirements-dev.txt': 'not documentation',
      'CMakeLists.txt': 'not documentation',
      'docs/notes.txt': 'included',
      'src/min.ts': 'included',
    });
  });
});

describe("selectFiles: Context7's default excludes", () => {
  it('skips changelogs, licenses and codes of conduct in any case', () => {
    expect(reasons(['CHANGELOG.md', 'docs/changelog.mdx', 'packages/a/Changelog.md', 'LICENSE.md', 'license.txt', 'CODE_OF_CONDUCT.md', 'README.md', 'docs/changelog-guide.md'])).toEqual({
      'CHANGELOG.md': 'default exclude: changelog',
      'docs/changelog.mdx': 'default exclude: changelog',
      'packages/a/Changelog.md': 'default exclude: changelog',
      'LICENSE.md': 'default exclude: license',
      'license.txt': 'default exclude: license',
      'CODE_OF_CONDUCT.md': 'default exclude: code of conduct',
      'README.md': 'included',
      'docs/changelog-guide.md': 'included',
    });
  });

  it('skips archive, deprecated, legacy, previous, outdated, superseded and old folders', () => {
    expect(
      reasons([
        'docs/archive/v1.md',
        'docs/archived-guides/a.md',
        'docs/Deprecated/api.md',
        'legacy/index.md',
        'docs/previous-versions/x.md',
        'docs/outdated/x.md',
        'docs/superseded/x.md',
        'old/README.md',
        'docs/old/intro.md',
        'docs/older/intro.md',
        'docs/bold/intro.md',
        'docs/guide/intro.md',
        'docs/archive.md',
      ]),
    ).toEqual({
      'docs/archive/v1.md': 'default exclude: folder archive/',
      'docs/archived-guides/a.md': 'default exclude: folder archived-guides/',
      'docs/Deprecated/api.md': 'default exclude: folder Deprecated/',
      'legacy/index.md': 'default exclude: folder legacy/',
      'docs/previous-versions/x.md': 'default exclude: folder previous-versions/',
      'docs/outdated/x.md': 'default exclude: folder outdated/',
      'docs/superseded/x.md': 'default exclude: folder superseded/',
      'old/README.md': 'default exclude: folder old/',
      'docs/old/intro.md': 'default exclude: folder old/',
      'docs/older/intro.md': 'included',
      'docs/bold/intro.md': 'included',
      'docs/guide/intro.md': 'included',
      'docs/archive.md': 'included', // a file name, not a folder
    });
  });

  it('skips translated docs, but not English ones or two-letter source folders', () => {
    expect(
      reasons([
        'i18n/fr/docusaurus-plugin-content-docs/current/intro.md',
        'website/i18n/ja/intro.md',
        'docs/i18n/README.md',
        'docs/zh-cn/guide.md',
        'content/zh_TW/guide.md',
        'guides/pt-BR/start.md',
        'docs/fr/intro.md',
        'docs/de/intro.md',
        'website/ko/intro.md',
        'docs/en/intro.md',
        'docs/en-us/intro.md',
        'docs/api/intro.md',
        'src/de/parser.ts',
        'src/it/runner.py',
        'lib/id/generate.go',
        'README.zh-CN.md',
        'README_ja.md',
        'README-ko.md',
        'docs/intro.fr.md',
        'docs/user-id.md',
        'README.md',
      ]),
    ).toEqual({
      'i18n/fr/docusaurus-plugin-content-docs/current/intro.md': 'default exclude: translated docs (fr/)',
      'website/i18n/ja/intro.md': 'default exclude: translated docs (ja/)',
      'docs/i18n/README.md': 'included',
      'docs/zh-cn/guide.md': 'default exclude: translated docs (zh-cn/)',
      'content/zh_TW/guide.md': 'default exclude: translated docs (zh_TW/)',
      'guides/pt-BR/start.md': 'default exclude: translated docs (pt-BR/)',
      'docs/fr/intro.md': 'default exclude: translated docs (fr/)',
      'docs/de/intro.md': 'default exclude: translated docs (de/)',
      'website/ko/intro.md': 'default exclude: translated docs (ko/)',
      'docs/en/intro.md': 'included',
      'docs/en-us/intro.md': 'included',
      'docs/api/intro.md': 'included',
      'src/de/parser.ts': 'included',
      'src/it/runner.py': 'included',
      'lib/id/generate.go': 'included',
      'README.zh-CN.md': 'default exclude: translated docs',
      'README_ja.md': 'default exclude: translated docs',
      'README-ko.md': 'default exclude: translated docs',
      'docs/intro.fr.md': 'default exclude: translated docs',
      'docs/user-id.md': 'included',
      'README.md': 'included',
    });
  });
});

describe("selectFiles: a repository's tests, fixtures and generated declarations", () => {
  const repo = [
    'test/app.test.js',
    'tests/unit/parser.py',
    'src/__tests__/button.tsx',
    'src/button.test.tsx',
    'src/button.spec.ts',
    'pkg/server_test.go',
    'python/test_client.py',
    'spec/models/user_spec.rb',
    'src/main/java/AppTest.java',
    'test/fixtures/README.md',
    'docs/fixtures/sample.md',
    'internal/testdata/golden.md',
    'src/__snapshots__/x.snap.md',
    'src/__mocks__/fs.ts',
    'worker-configuration.d.ts',
    'types/index.d.ts',
    'docs/Guides/Testing.md',
    'src/testing.ts',
    'src/contest.ts',
    'src/latest.java',
    'README.md',
  ];

  it('leaves them out by default, with a reason', () => {
    expect(reasons(repo)).toEqual({
      'test/app.test.js': 'default exclude: tests (test/)',
      'tests/unit/parser.py': 'default exclude: tests (tests/)',
      'src/__tests__/button.tsx': 'default exclude: tests (__tests__/)',
      'src/button.test.tsx': 'default exclude: test file',
      'src/button.spec.ts': 'default exclude: test file',
      'pkg/server_test.go': 'default exclude: test file',
      'python/test_client.py': 'default exclude: test file',
      'spec/models/user_spec.rb': 'default exclude: test file',
      'src/main/java/AppTest.java': 'default exclude: test file',
      'test/fixtures/README.md': 'default exclude: tests (test/)',
      'docs/fixtures/sample.md': 'default exclude: tests (fixtures/)',
      'internal/testdata/golden.md': 'default exclude: tests (testdata/)',
      'src/__snapshots__/x.snap.md': 'default exclude: tests (__snapshots__/)',
      'src/__mocks__/fs.ts': 'default exclude: tests (__mocks__/)',
      'worker-configuration.d.ts': 'default exclude: generated declaration file',
      'types/index.d.ts': 'included',
      'docs/Guides/Testing.md': 'included', // documentation about testing is documentation
      'src/testing.ts': 'included',
      'src/contest.ts': 'included',
      'src/latest.java': 'included',
      'README.md': 'included',
    });
  });

  it('indexes them when `includeFiles` names them or `folders` spells the folder out; the excludes still win', () => {
    const cfg = config({ includeFiles: ['test/**/*.md', '*.spec.ts', 'worker-configuration.d.ts', 'CHANGELOG.md'], excludeFiles: ['test/fixtures/README.md'] });
    expect(reasons([...repo, 'test/guide.md', 'CHANGELOG.md', 'node_modules/x/test/a.md', 'src/app.min.js'], cfg)).toMatchObject({
      'test/guide.md': 'included',
      'src/button.spec.ts': 'included',
      'worker-configuration.d.ts': 'included',
      'CHANGELOG.md': 'included',
      'test/fixtures/README.md': 'excludeFiles: test/fixtures/README.md',
      'test/app.test.js': 'default exclude: tests (test/)',
      'node_modules/x/test/a.md': 'inside node_modules/',
      'src/app.min.js': 'minified file',
    });
    expect(reasons(['src/app.min.js'], config({ includeFiles: ['*.min.js'] }))).toEqual({ 'src/app.min.js': 'included' });
    expect(reasons(['test/a.md', 'test/fixtures/b.md', 'test/c.test.js'], config({ folders: ['test'] }))).toEqual({
      'test/a.md': 'included',
      'test/fixtures/b.md': 'default exclude: tests (fixtures/)',
      'test/c.test.js': 'default exclude: test file',
    });
  });

  it('checks what needs the file as it is read: large declaration files and generated headers', () => {
    const none = config();
    expect(contentExclusion('types/index.d.ts', 20_000, 'export interface A {}', none)).toBeNull();
    expect(contentExclusion('types/runtime.d.ts', DECLARATION_MAX_BYTES + 1, 'interface A {}', none)).toBe('default exclude: declaration file over 100 KB');
    expect(contentExclusion('types/runtime.d.ts', DECLARATION_MAX_BYTES + 1, '', config({ includeFiles: ['types/*.d.ts'] }))).toBeNull();
    for (const head of ['// Code generated by protoc-gen-go. DO NOT EDIT.', '/* eslint-disable */\n// Generated by Wrangler on Mon Jan 1', '# @generated by a tool', ' * This file was automatically generated.']) {
      expect(contentExclusion('src/api.ts', 500, `${head}\nexport const x = 1;`, none), head).toBe('default exclude: generated (says so in its header)');
    }
    expect(contentExclusion('src/ids.ts', 500, '// IDs generated by the server are opaque.\nexport const x = 1;', none)).toBeNull();
    expect(contentExclusion('docs/api.md', 500, '<!-- This file is generated by typedoc -->\n# API', none)).toBeNull(); // generated docs are still docs
    expect(contentExclusion('src/api.ts', 500, `${'\n'.repeat(12)}// DO NOT EDIT`, none)).toBeNull(); // only the header counts
  });
});

describe('selectFiles: the config file', () => {
  const repo = [
    'README.md',
    'CONTRIBUTING.md',
    'index.rst',
    'setup.py',
    'docs/intro.md',
    'docs/api/client.md',
    'docs/internal/notes.md',
    'docs/legacy.md',
    'docs/legacy-api.md',
    'docs/legacy/v1.md',
    'docs/legacyish/v1.md',
    'packages/core/src/queue.ts',
    'packages/core/examples/demo.ts',
    'examples/basic.py',
    'src/lib.rs',
  ];

  it('limits indexing to `folders`, always keeping root-level Markdown and reStructuredText', () => {
    const sel = selectFiles(repo, config({ folders: ['docs/api', 'packages/core/src'] }));
    expect(sel.included).toEqual(['CONTRIBUTING.md', 'README.md', 'docs/api/client.md', 'index.rst', 'packages/core/src/queue.ts']);
    expect(sel.excluded.find((e) => e.path === 'setup.py')?.reason).toBe('not under folders');
    expect(sel.excluded.find((e) => e.path === 'docs/intro.md')?.reason).toBe('not under folders');
  });

  it('lets `excludeFolders` beat `folders`: a bare name matches at any depth, a path from the root', () => {
    const sel = selectFiles(repo, config({ folders: ['docs', 'packages'], excludeFolders: ['examples', 'docs/internal'] }));
    expect(sel.included).toEqual([
      'CONTRIBUTING.md',
      'README.md',
      'docs/api/client.md',
      'docs/intro.md',
      'docs/legacy-api.md',
      'docs/legacy.md',
      'index.rst',
      'packages/core/src/queue.ts',
    ]);
    expect(reasons(repo, config({ folders: ['docs', 'packages'], excludeFolders: ['examples', 'docs/internal'] }))).toMatchObject({
      'packages/core/examples/demo.ts': 'excludeFolders: examples',
      'examples/basic.py': 'excludeFolders: examples',
      'docs/internal/notes.md': 'excludeFolders: docs/internal',
      'docs/legacy/v1.md': 'default exclude: folder legacy/',
      'docs/legacyish/v1.md': 'default exclude: folder legacyish/', // the name contains "legacy"
    });
  });

  it('matches `excludeFolders` paths from the root only, and supports globs', () => {
    expect(reasons(['docs/internal/a.md', 'site/docs/internal/a.md', 'packages/a/test/x.ts', 'packages/b/src/x.ts'], config({ excludeFolders: ['docs/internal', 'packages/*/test'] }))).toEqual({
      'docs/internal/a.md': 'excludeFolders: docs/internal',
      'site/docs/internal/a.md': 'included',
      'packages/a/test/x.ts': 'excludeFolders: packages/*/test',
      'packages/b/src/x.ts': 'included',
    });
  });

  it('supports the three forms of `excludeFiles`: file name, glob prefix, exact path', () => {
    const cfg = config({ excludeFiles: ['CONTRIBUTING.md', 'docs/legacy*', 'docs/api/client.md', '*.test.ts'] });
    expect(reasons([...repo, 'packages/core/CONTRIBUTING.md', 'src/queue.test.ts'], cfg)).toMatchObject({
      'CONTRIBUTING.md': 'excludeFiles: CONTRIBUTING.md',
      'packages/core/CONTRIBUTING.md': 'excludeFiles: CONTRIBUTING.md',
      'docs/legacy.md': 'excludeFiles: docs/legacy*',
      'docs/legacy-api.md': 'excludeFiles: docs/legacy*',
      'docs/legacy/v1.md': 'excludeFiles: docs/legacy*',
      'docs/legacyish/v1.md': 'excludeFiles: docs/legacy*',
      'docs/api/client.md': 'excludeFiles: docs/api/client.md',
      'src/queue.test.ts': 'excludeFiles: *.test.ts',
      'docs/intro.md': 'included',
      'README.md': 'included',
    });
  });

  it('applies `excludeFiles` to root-level Markdown too', () => {
    expect(selectFiles(['README.md', 'CONTRIBUTING.md'], config({ folders: ['docs'], excludeFiles: ['CONTRIBUTING.md'] })).included).toEqual(['README.md']);
  });

  it('does not apply default folder excludes to the folders a `folders` entry names explicitly', () => {
    expect(reasons(['docs/legacy/v1.md', 'docs/legacy/old/v0.md', 'docs/legacy/archive/x.md', 'docs/intro.md'], config({ folders: ['docs/legacy'] }))).toEqual({
      'docs/legacy/v1.md': 'included',
      'docs/legacy/old/v0.md': 'default exclude: folder old/',
      'docs/legacy/archive/x.md': 'default exclude: folder archive/',
      'docs/intro.md': 'not under folders',
    });
  });

  it('supports ** across folders and ? within a name, and matches pathological patterns quickly', () => {
    const cfg = config({ excludeFolders: ['**/fixtures'], excludeFiles: ['docs/**/draft-?.md', `${'*a'.repeat(30)}*b.md`] });
    expect(reasons(['test/unit/fixtures/x.ts', 'fixtures/y.ts', 'docs/a/b/draft-1.md', 'docs/draft-2.md', 'docs/draft-10.md', `${'a'.repeat(200)}.md`], cfg)).toEqual({
      'test/unit/fixtures/x.ts': 'excludeFolders: **/fixtures',
      'fixtures/y.ts': 'excludeFolders: **/fixtures',
      'docs/a/b/draft-1.md': 'excludeFiles: docs/**/draft-?.md',
      'docs/draft-2.md': 'excludeFiles: docs/**/draft-?.md',
      'docs/draft-10.md': 'included',
      [`${'a'.repeat(200)}.md`]: 'included',
    });
  });

  it('normalises "./" and leading slashes in config entries', () => {
    expect(selectFiles(['docs/a.md', 'src/b.ts'], config({ folders: ['./docs/'], excludeFiles: ['/docs/a.md'] })).included).toEqual([]);
  });
});

describe('selectFiles: output', () => {
  it('is sorted, de-duplicated and gives every excluded path a reason', () => {
    const paths = ['z.md', 'docs/b.md', 'a.md', 'docs/b.md', 'node_modules/x.md', 'img.png', 'B.md', 'é.md'];
    const sel = selectFiles(paths, config());
    expect(sel.included).toEqual(['B.md', 'a.md', 'docs/b.md', 'z.md', 'é.md']);
    expect(sel.excluded).toEqual([
      { path: 'img.png', reason: 'not a documentation or source file' },
      { path: 'node_modules/x.md', reason: 'inside node_modules/' },
    ]);
    expect(selectFiles([...paths].reverse(), config())).toEqual(sel);
  });

  it('rejects paths that are not repo-relative files', () => {
    expect(reasons(['../etc/passwd.md', 'docs/', 'a//b.md', ''])).toEqual({
      '../etc/passwd.md': 'not a repo-relative path',
      'docs/': 'not a file path',
      'a//b.md': 'not a repo-relative path',
      '': 'not a file path',
    });
  });
});
