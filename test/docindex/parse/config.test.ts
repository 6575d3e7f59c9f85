import { describe, expect, it } from 'vitest';
import { createAjv } from '../../../core/ajv.js';
import { CONFIG_FILE_NAMES, findConfigFile, parseRepoConfig, repoConfigSchema } from '../../../docindex/parse/config.js';

const EMPTY = { folders: [], excludeFolders: [], excludeFiles: [], includeFiles: [], rules: [], previousVersions: [] };

describe('parseRepoConfig', () => {
  it('reads a complete Context7 file, ignoring its extra keys silently', () => {
    const text = JSON.stringify({
      $schema: 'https://context7.com/schema/context7.json',
      projectTitle: 'Millstone',
      description: 'A task queue for Node.js backed by PostgreSQL.',
      branch: 'main',
      folders: ['docs', 'packages/core/src'],
      excludeFolders: ['docs/internal', 'examples'],
      excludeFiles: ['CONTRIBUTING.md', 'docs/legacy*'],
      rules: ['Always await queue.close() before exiting the process.', 'Use idempotent job handlers.'],
      previousVersions: [{ tag: 'v1.4.2', title: '1.x' }, { tag: 'v0.9.0' }],
      branchVersions: [{ branch: 'next' }],
      url: 'https://context7.com/acme/millstone',
      public_key: 'pk_abc',
    });
    expect(parseRepoConfig(text)).toEqual({
      config: {
        projectTitle: 'Millstone',
        description: 'A task queue for Node.js backed by PostgreSQL.',
        branch: 'main',
        folders: ['docs', 'packages/core/src'],
        excludeFolders: ['docs/internal', 'examples'],
        excludeFiles: ['CONTRIBUTING.md', 'docs/legacy*'],
        includeFiles: [],
        rules: ['Always await queue.close() before exiting the process.', 'Use idempotent job handlers.'],
        previousVersions: [{ tag: 'v1.4.2', title: '1.x' }, { tag: 'v0.9.0' }],
      },
      warnings: [],
    });
  });

  it('accepts an empty object without warnings', () => {
    expect(parseRepoConfig('{}')).toEqual({ config: EMPTY, warnings: [] });
  });

  it('reads includeFiles like the other path lists', () => {
    const { config, warnings } = parseRepoConfig('{"includeFiles": ["./test/**/*.md", "", 3, "CHANGELOG.md", "CHANGELOG.md"]}');
    expect(config.includeFiles).toEqual(['test/**/*.md', 'CHANGELOG.md']);
    expect(warnings).toEqual(['includeFiles[2] is not a string; dropped', 'includeFiles[1] is empty; dropped']);
  });

  it('tolerates comments, trailing commas and a BOM', () => {
    const text = `\uFEFF{
      // which folders to read
      "folders": ["docs",], /* block comment */
      "rules": [
        "Prefer the async API.", // trailing comment
      ],
    }`;
    expect(parseRepoConfig(text)).toEqual({ config: { ...EMPTY, folders: ['docs'], rules: ['Prefer the async API.'] }, warnings: [] });
  });

  it('ignores a key of the wrong type with a warning and keeps the rest', () => {
    const { config, warnings } = parseRepoConfig('{"folders": "docs", "projectTitle": 42, "rules": {"a": 1}, "excludeFiles": ["a.md"], "previousVersions": "v1"}');
    expect(config).toEqual({ ...EMPTY, excludeFiles: ['a.md'] });
    expect(warnings).toEqual([
      'projectTitle must be a string; ignored',
      'folders must be an array of strings; ignored',
      'rules must be an array of strings; ignored',
      'previousVersions must be an array of {tag, title} objects; ignored',
    ]);
  });

  it('drops list items of the wrong type with a warning', () => {
    const { config, warnings } = parseRepoConfig('{"excludeFolders": ["archive", 3, null, "docs/old"], "rules": ["Use the v2 client everywhere.", false]}');
    expect(config.excludeFolders).toEqual(['archive', 'docs/old']);
    expect(config.rules).toEqual(['Use the v2 client everywhere.']);
    expect(warnings).toEqual(['excludeFolders[1] is not a string; dropped', 'excludeFolders[2] is not a string; dropped', 'rules[1] is not a string; dropped']);
  });

  it('normalises paths and drops empty and repeated entries', () => {
    const { config, warnings } = parseRepoConfig('{"folders": ["./docs/", "/guides", "docs", "  ", "src\\\\api", "."]}');
    expect(config.folders).toEqual(['docs', 'guides', 'src/api']);
    expect(warnings).toEqual(['folders[3] is empty; dropped', 'folders[5] is empty; dropped']);
  });

  it('trims rules, drops empty and repeated ones, and only warns about Context7 length limits', () => {
    const long = `Always ${'really '.repeat(40)}check the result.`;
    const { config, warnings } = parseRepoConfig(JSON.stringify({ rules: ['  Use queue.close().  ', '', '   ', 'TBD', long, 'Use queue.close().'] }));
    expect(config.rules).toEqual(['Use queue.close().', 'TBD', long]);
    expect(warnings).toEqual([
      'rules[1] is empty; dropped',
      'rules[2] is empty; dropped',
      'rules[3] is 3 characters (Context7 allows 5-200); kept',
      `rules[4] is ${long.length} characters (Context7 allows 5-200); kept`,
      'rules[5] repeats an earlier rule; dropped',
    ]);
  });

  it('warns about projectTitle and description lengths but keeps them', () => {
    const { config, warnings } = parseRepoConfig(JSON.stringify({ projectTitle: 'x'.repeat(120), description: 'Short', branch: '' }));
    expect(config.projectTitle).toHaveLength(120);
    expect(config.description).toBe('Short');
    expect(config.branch).toBeUndefined();
    expect(warnings).toEqual(['projectTitle is 120 characters (Context7 allows 1-100); kept', 'description is 5 characters (Context7 allows 10-200); kept', 'branch is empty; ignored']);
  });

  it('accepts plain strings as previousVersions tags, with a warning, and drops bad entries', () => {
    const { config, warnings } = parseRepoConfig(
      JSON.stringify({ previousVersions: ['v2.0.0', { tag: 'v1.0.0', title: 'One' }, { title: 'no tag' }, 7, { tag: ' ' }, { tag: 'v2.0.0' }, { tag: 'v0.1', title: 3 }] }),
    );
    expect(config.previousVersions).toEqual([{ tag: 'v2.0.0' }, { tag: 'v1.0.0', title: 'One' }, { tag: 'v0.1' }]);
    expect(warnings).toEqual([
      'previousVersions[0] is a plain string; treated as a tag',
      'previousVersions[2].tag must be a string; entry dropped',
      'previousVersions[3] must be an object with a tag; dropped',
      'previousVersions[4].tag is empty; entry dropped',
      'previousVersions[5] repeats tag v2.0.0; dropped',
      'previousVersions[6].title must be a string; ignored',
    ]);
  });

  it('falls back to the defaults with one warning for unparsable or non-object text', () => {
    for (const text of ['this is not json', '[1, 2]', '"docs"', '42', 'null', '{{{']) {
      const { config, warnings } = parseRepoConfig(text);
      expect(config).toEqual(EMPTY);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/using defaults$/);
    }
    expect(parseRepoConfig('').warnings).toEqual(['config file is empty; using defaults']);
  });

  it('uses what it can read from a broken file and says where it broke', () => {
    const { config, warnings } = parseRepoConfig('{\n  "folders": ["docs"],\n  "rules": ["Use the async API." "Never block the loop."]\n}');
    expect(config.folders).toEqual(['docs']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^config file has syntax errors \(CommaExpected at line 3, column \d+\); used what could be read$/);
  });

  it('never throws, whatever the input', () => {
    for (const text of [undefined, null, 5, '\u0000', '{"folders": [[[]]]}', '{"__proto__": {"folders": ["x"]}}'] as unknown[]) {
      expect(() => parseRepoConfig(text as string)).not.toThrow();
    }
    expect(parseRepoConfig('{"__proto__": {"folders": ["x"]}}').config.folders).toEqual([]);
  });
});

describe('config file names and schema', () => {
  it('prefers gristmill.json over context7.json, at the root only', () => {
    expect(CONFIG_FILE_NAMES).toEqual(['gristmill.json', 'context7.json']);
    expect(findConfigFile(['context7.json', 'README.md', 'gristmill.json'])).toBe('gristmill.json');
    expect(findConfigFile(['./context7.json'])).toBe('context7.json');
    expect(findConfigFile(['docs/gristmill.json', 'README.md'])).toBeNull();
  });

  it('is a valid draft 2020-12 schema with titles and descriptions, accepting Context7 files', () => {
    const ajv = createAjv();
    const validate = ajv.compile(repoConfigSchema);
    const schema = repoConfigSchema as { $schema: string; title: string; description: string; properties: Record<string, { title?: string; description?: string }> };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    for (const key of ['projectTitle', 'description', 'branch', 'folders', 'excludeFolders', 'excludeFiles', 'includeFiles', 'rules', 'previousVersions']) {
      expect(schema.properties[key]?.title, key).toBeTruthy();
      expect(schema.properties[key]?.description, key).toBeTruthy();
    }
    expect(
      validate({
        $schema: 'https://context7.com/schema/context7.json',
        projectTitle: 'Millstone',
        description: 'A task queue for Node.js backed by PostgreSQL.',
        folders: ['docs'],
        excludeFolders: ['docs/internal'],
        excludeFiles: ['CHANGELOG.md'],
        rules: ['Always close the queue.'],
        previousVersions: [{ tag: 'v1.0.0', title: '1.x' }],
        branchVersions: [{ branch: 'next' }],
        url: 'https://context7.com/acme/millstone',
        public_key: 'pk_x',
      }),
    ).toBe(true);
    expect(validate({ folders: 'docs' })).toBe(false);
    expect(validate({ previousVersions: [{ title: 'no tag' }] })).toBe(false);
  });
});
