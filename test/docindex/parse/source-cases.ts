import { describe, expect, it } from 'vitest';
import { countTokens, parseFile } from '../../../docindex/parse/parse.js';
import { byTitle, fixture, rows } from './helpers.js';

/**
 * What source splitting must give whichever way the declarations are found: run with the tree-sitter grammars
 * loaded (source.test.ts) and without them, on the line lexer (source-lexer.test.ts).
 */
export function sourceCases(): void {
  describe('TypeScript / JavaScript (router.ts)', () => {
    const snippets = parseFile('src/router.ts', fixture('router.ts.txt'));

    it('splits at top-level declarations, titled by symbol, with the path in the breadcrumb', () => {
      expect(rows(snippets)).toEqual([
        { type: 'code', title: 'type Handler, type Method', breadcrumb: 'src/router.ts > type Handler, type Method', language: 'ts' },
        { type: 'code', title: 'interface RouterOptions', breadcrumb: 'src/router.ts > interface RouterOptions', language: 'ts' },
        { type: 'code', title: 'class Router', breadcrumb: 'src/router.ts > class Router', language: 'ts' },
        { type: 'code', title: 'const template', breadcrumb: 'src/router.ts > const template', language: 'ts' },
        { type: 'code', title: 'function createRouter', breadcrumb: 'src/router.ts > function createRouter', language: 'ts' },
        { type: 'code', title: 'function matchPath', breadcrumb: 'src/router.ts > function matchPath', language: 'ts' },
      ]);
      for (const s of snippets) expect(s.tokenCount).toBe(countTokens(s.content));
    });

    it('drops a preamble of only a license header and imports', () => {
      const all = snippets.map((s) => s.content).join('\n');
      expect(all).not.toContain('Copyright');
      expect(all).not.toContain("from 'node:events'");
    });

    it('attaches doc comments and multi-line decorators to the class, and keeps it whole despite braces in strings', () => {
      const router = byTitle(snippets, 'class Router').content;
      expect(router.startsWith('/**\n * A minimal HTTP router.')).toBe(true);
      expect(router).toContain("@Injectable({\n  scope: 'singleton',\n})\nexport class Router");
      expect(router.trimEnd().endsWith('return this;\n  }\n}')).toBe(true);
    });

    it('does not see declarations inside block comments or template literals', () => {
      expect(snippets.some((s) => /notADeclaration|alsoNotADeclaration/.test(s.title ?? ''))).toBe(false);
      expect(byTitle(snippets, 'const template').content).toContain('export function alsoNotADeclaration() {');
    });

    it('titles arrow-function consts as functions and keeps a trailing `export default X;` with the previous declaration', () => {
      expect(byTitle(snippets, 'function matchPath').content.endsWith('};\n\nexport default Router;')).toBe(true);
    });

    it('handles TSX components with apostrophes in JSX text and regex literals with braces', () => {
      const tsx = [
        "import React from 'react';",
        '',
        'export function Banner({ name }: { name: string }) {',
        "  const valid = /^[{}]+$/.test(name) ? 'braces' : `plain ${name}`;",
        '  return (',
        '    <div className="banner">',
        '      <p>Don&apos;t forget: {name} is {valid}</p>',
        '    </div>',
        '  );',
        '}',
        '',
        'export const Card = React.forwardRef<HTMLDivElement, { title: string }>(function Card(props, ref) {',
        '  return <section ref={ref}><h2>{props.title}</h2><p>Cards group related content together.</p></section>;',
        '});',
      ].join('\n');
      expect(parseFile('src/Banner.tsx', tsx).map((s) => [s.title, s.language])).toEqual([
        ['function Banner', 'tsx'],
        ['const Card', 'tsx'],
      ]);
    });

    it('treats top-level test suites as declarations, split at their test cases when large', () => {
      const cases = Array.from({ length: 30 }, (_, i) => `  it('encodes message ${i}', () => {\n    const actual = serialize.message${i}({ user: 'ada', database: 'db${i}' });\n    expect(actual).toEqual(expected${i});\n  });`);
      const ts = `import { serialize } from './serializer';\n\ndescribe('serializer', () => {\n${cases.join('\n\n')}\n});\n`;
      const parts = parseFile('src/serializer.test.ts', ts, { maxTokens: 300 });
      expect(parts.length).toBeGreaterThan(2);
      parts.forEach((p, i) => expect(p.title).toBe(`describe serializer (part ${i + 1}/${parts.length})`));
      for (const p of parts.slice(1)) expect(p.content.startsWith("  it('encodes message")).toBe(true);
    });

    it('recognises CommonJS exports and export default objects in .cjs / .mjs files', () => {
      const cjs = [
        "'use strict';",
        "const path = require('node:path');",
        '',
        '/** Resolves a config file relative to the project root. */',
        'exports.resolveConfig = function resolveConfig(root, name) {',
        "  return path.join(root, name || 'millstone.config.js');",
        '};',
        '',
        'module.exports.defaults = { concurrency: 4, pollInterval: 1000, retries: 3, backoff: "exponential" };',
      ].join('\n');
      expect(parseFile('lib/config.cjs', cjs).map((s) => [s.title, s.language])).toEqual([
        ['function resolveConfig', 'js'],
        ['exports.defaults', 'js'],
      ]);
      const mjs = 'export default {\n  plugins: [millstonePlugin({ queue: "emails", concurrency: 4 })],\n  output: { dir: "dist" },\n};\n';
      expect(parseFile('vite.config.mjs', mjs).map((s) => s.title)).toEqual(['export default']);
    });
  });

  describe('Python (client.py)', () => {
    const snippets = parseFile('millstone/client.py', fixture('client.py'));

    it('keeps the module docstring preamble and splits at def/class at column 0', () => {
      expect(rows(snippets)).toEqual([
        { type: 'code', title: 'client.py', breadcrumb: 'millstone/client.py', language: 'python' },
        { type: 'code', title: 'class Job', breadcrumb: 'millstone/client.py > class Job', language: 'python' },
        { type: 'code', title: 'class Client', breadcrumb: 'millstone/client.py > class Client', language: 'python' },
        { type: 'code', title: 'def connect', breadcrumb: 'millstone/client.py > def connect', language: 'python' },
        { type: 'code', title: 'def wait_for', breadcrumb: 'millstone/client.py > def wait_for', language: 'python' },
      ]);
      expect(snippets[0]!.content.startsWith('"""Millstone client.')).toBe(true);
    });

    it('attaches decorators and comments, keeps docstrings, and ignores "def" inside docstrings', () => {
      expect(byTitle(snippets, 'class Job').content.startsWith('@dataclass(frozen=True)\nclass Job:\n    """A job as returned by the server."""')).toBe(true);
      expect(byTitle(snippets, 'def connect').content.startsWith('# Module-level helper with a decorator and a comment above it.\n@staticmethod\ndef connect(')).toBe(true);
      const client = byTitle(snippets, 'class Client').content;
      expect(client).toContain('def not_a_method_but_docstring_text():');
      expect(client).toContain('def _post(self, path: str, body: str)');
    });

    it('treats async def as a declaration', () => {
      expect(byTitle(snippets, 'def wait_for').content.startsWith('async def wait_for(')).toBe(true);
    });
  });

  describe('Go (server.go)', () => {
    const snippets = parseFile('server/server.go', fixture('server.go'));

    it('splits at func and type, titles methods by receiver, keeps the package comment without the license', () => {
      expect(rows(snippets)).toEqual([
        { type: 'code', title: 'server.go', breadcrumb: 'server/server.go', language: 'go' },
        { type: 'code', title: 'var ErrNotFound, type Server, func New', breadcrumb: 'server/server.go > var ErrNotFound, type Server, func New', language: 'go' },
        { type: 'code', title: 'func Server.ServeHTTP', breadcrumb: 'server/server.go > func Server.ServeHTTP', language: 'go' },
        { type: 'code', title: 'func Server.handleList', breadcrumb: 'server/server.go > func Server.handleList', language: 'go' },
      ]);
      expect(snippets[0]!.content.startsWith('// Package server exposes the Millstone HTTP API.')).toBe(true);
      expect(snippets[0]!.content).not.toContain('SPDX');
    });

    it('is not confused by raw strings, struct tags and runes containing braces', () => {
      const serve = byTitle(snippets, 'func Server.ServeHTTP').content;
      expect(serve.startsWith('// ServeHTTP implements http.Handler.')).toBe(true);
      expect(serve.endsWith('w.WriteHeader(http.StatusAccepted)\n}')).toBe(true);
    });
  });

  describe('Rust (lib.rs)', () => {
    const snippets = parseFile('src/lib.rs', fixture('lib.rs'));

    it('splits at struct/enum/impl/trait/fn/macro with attributes and doc comments attached', () => {
      expect(snippets.map((s) => s.title)).toEqual([
        'lib.rs',
        'struct Job, enum RetryPolicy',
        "impl fmt::Display for Job<'a>",
        'impl RetryPolicy',
        'trait Handler, fn run_once, macro job',
      ]);
      expect(byTitle(snippets, 'struct Job, enum RetryPolicy').content.startsWith('/// A queued unit of work.\n#[derive(Debug, Clone, PartialEq)]\n#[serde(rename_all = "camelCase")]\npub struct Job')).toBe(true);
    });

    it('handles lifetimes, char literals, raw strings and nested block comments', () => {
      expect(byTitle(snippets, "impl fmt::Display for Job<'a>").content.endsWith('self.attempts)\n    }\n}')).toBe(true);
      expect(snippets.some((s) => s.title?.includes('not_a_function'))).toBe(false);
    });
  });

  describe('Java (Cache.java)', () => {
    const snippets = parseFile('src/main/java/dev/acme/Cache.java', fixture('Cache.java'));

    it('keeps a class below the cap whole, with its Javadoc and annotation, and groups small types', () => {
      expect(snippets.map((s) => s.title)).toEqual(['class Cache', 'interface Evictable, record Entry']);
      const cache = snippets[0]!.content;
      expect(cache.startsWith('/**\n * A small LRU cache')).toBe(true);
      expect(cache).toContain('@SuppressWarnings("serial")\npublic final class Cache<K, V>');
      expect(cache.endsWith('.formatted(capacity);\n    }\n}')).toBe(true);
      expect(cache).not.toContain('Licensed under');
    });

    it('splits a class over the cap at method boundaries, each part titled and keeping its Javadoc', () => {
      const methods = Array.from({ length: 12 }, (_, i) =>
        [
          `    /** Returns the value of setting number ${i}, falling back to the default when it is unset. */`,
          '    @Override',
          `    public String setting${i}(String key) {`,
          `        String value = values.getOrDefault(key + "-${i}", "{default}");`,
          `        return value.isEmpty() ? defaults.get("${i}") : value.trim();`,
          '    }',
        ].join('\n'),
      );
      const java = `package dev.acme;\n\npublic class Settings {\n    private final Map<String, String> values = new HashMap<>();\n\n${methods.join('\n\n')}\n}\n`;
      const parts = parseFile('Settings.java', java, { maxTokens: 250 });
      expect(parts.length).toBeGreaterThan(2);
      parts.forEach((p, i) => {
        expect(p.title).toBe(`class Settings (part ${i + 1}/${parts.length})`);
        expect(p.breadcrumb).toBe('Settings.java > class Settings');
        expect(p.tokenCount).toBeLessThanOrEqual(250);
        if (i > 0) expect(p.content.startsWith('    /** Returns the value of setting number')).toBe(true);
      });
      // Whole methods, no overlap: every method appears exactly once.
      const joined = parts.map((p) => p.content).join('\n');
      for (let i = 0; i < 12; i++) expect(joined.split(`public String setting${i}(`).length).toBe(2);
    });
  });

  describe('large declarations in other languages', () => {
    it('splits a long Python class at its methods', () => {
      const methods = Array.from({ length: 10 }, (_, i) => `    @property\n    def field_${i}(self) -> str:\n        """Field ${i} of the record, read from the underlying row."""\n        return self._row["field_${i}"] or "default value for ${i}"\n`);
      const py = `class Record:\n    """A database row."""\n\n${methods.join('\n')}`;
      const parts = parseFile('record.py', py, { maxTokens: 150 });
      expect(parts.length).toBeGreaterThan(2);
      for (const p of parts.slice(1)) expect(p.content.startsWith('    @property\n    def field_')).toBe(true);
      expect(parts.every((p) => p.title?.startsWith('class Record (part '))).toBe(true);
    });

    it('splits a long TypeScript function at its statements', () => {
      const body = Array.from({ length: 40 }, (_, i) => `  const step${i} = await run("step-${i}", { retries: ${i % 3}, timeoutMs: ${1000 + i} });`).join('\n');
      const ts = `export async function migrate(db: Db): Promise<void> {\n${body}\n}\n`;
      const parts = parseFile('migrate.ts', ts, { maxTokens: 200, overlapTokens: 0 });
      expect(parts.length).toBeGreaterThan(3);
      for (const p of parts) {
        expect(p.tokenCount).toBeLessThanOrEqual(200);
        expect(p.content.split('\n').every((l) => /^(?:export async function| {2}const step\d+|\})/.test(l))).toBe(true);
      }
    });
  });

  describe('comments standing alone between declarations', () => {
    it('go to the declaration after them, not the one before', () => {
      const body = (name: string) => [`function ${name} (options) {`, ...Array.from({ length: 6 }, (_, i) => `  const step${i} = options.steps[${i}] ?? defaultStep(${i}, '${name}')`), '  return options', '}'];
      const js = [
        ...body('parseHeaders'),
        '',
        '/**',
        ' * @typedef {object} StreamEvent',
        ' * @property {string} [event] The event type, as the server sent it.',
        ' * @property {string} [data] The data of the message.',
        ' */',
        '',
        '/** Reads server-sent events from a byte stream. */',
        ...body('readEvents'),
      ].join('\n');
      const snippets = parseFile('lib/events.js', js);
      expect(snippets.map((s) => s.title)).toEqual(['function parseHeaders', 'function readEvents']);
      expect(byTitle(snippets, 'function parseHeaders').content).not.toContain('@typedef');
      expect(byTitle(snippets, 'function readEvents').content.startsWith('/**\n * @typedef {object} StreamEvent')).toBe(true);
    });

    it('but a comment at the end of a Python body stays in it', () => {
      const body = (name: string) => [`def ${name}(rows):`, ...Array.from({ length: 6 }, (_, i) => `    step_${i} = compute_step(rows, ${i}, name="${name}")`)];
      const py = [...body('load'), '    # the last step needs no cleanup', '', '', '# ---- Helpers for exporting ----', '', ...body('export')].join('\n');
      const snippets = parseFile('pkg/steps.py', py);
      expect(snippets.map((s) => s.title)).toEqual(['def load', 'def export']);
      expect(byTitle(snippets, 'def load').content.endsWith('    # the last step needs no cleanup')).toBe(true);
      expect(byTitle(snippets, 'def export').content.startsWith('# ---- Helpers for exporting ----\n\ndef export(rows):')).toBe(true);
    });
  });
}
