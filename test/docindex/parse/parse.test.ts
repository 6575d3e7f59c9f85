import { countTokens as referenceCount } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countTokens, detectKind, parseFile, type ParsedSnippet } from '../../../docindex/parse/parse.js';
import { countTokensWithin } from '../../../docindex/parse/tokens.js';
import { assemble, resolveOptions, type RawSnippet } from '../../../docindex/parse/assemble.js';
import { parseMarkdown } from '../../../docindex/parse/markdown.js';
import { parseNotebook } from '../../../docindex/parse/notebook.js';
import { parseRst } from '../../../docindex/parse/rst.js';
import { parseSource } from '../../../docindex/parse/source.js';
import { normalizeNewlines } from '../../../docindex/parse/util.js';
import { fixture, prng, prose } from './helpers.js';

const FIXTURES: [string, string][] = [
  ['docs/getting-started.md', 'getting-started.md'],
  ['docs/install.mdx', 'tabs.mdx'],
  ['docs/guide.rst', 'guide.rst'],
  ['examples/quickstart.ipynb', 'quickstart.ipynb'],
  ['docs/notes.txt', 'notes.txt'],
  ['src/router.ts', 'router.ts.txt'],
  ['millstone/client.py', 'client.py'],
  ['server/server.go', 'server.go'],
  ['src/lib.rs', 'lib.rs'],
  ['src/Cache.java', 'Cache.java'],
  ['c/ring.c', 'ring.c'],
];

/** What must hold for every parse result. */
function expectWellFormed(snippets: ParsedSnippet[], maxTokens = 1200): void {
  snippets.forEach((s, i) => {
    expect(s.ordinal).toBe(i);
    expect(s.content.trim().length).toBeGreaterThan(0);
    expect(s.content).toBe(s.content.replace(/\s+$/, ''));
    expect(s.tokenCount).toBe(countTokens(s.content));
    expect(s.tokenCount).toBeLessThanOrEqual(maxTokens);
    expect(s.type === 'code' || s.type === 'info').toBe(true);
    if (s.type === 'info') expect(s.language).toBeNull();
  });
}

describe('detectKind', () => {
  it('maps extensions to kinds, case-insensitively, and null for everything else', () => {
    const cases: [string, ReturnType<typeof detectKind>][] = [
      ['README.md', 'markdown'],
      ['docs/page.MDX', 'markdown'],
      ['notes.markdown', 'markdown'],
      ['index.rst', 'rst'],
      ['notes.txt', 'text'],
      ['demo.ipynb', 'notebook'],
      ['src/a.ts', 'source'],
      ['src/a.d.ts', 'source'],
      ['a.py', 'source'],
      ['main.go', 'source'],
      ['lib.rs', 'source'],
      ['A.java', 'source'],
      ['a.c', 'source'],
      ['package.json', null],
      ['config.yaml', null],
      ['logo.png', null],
      ['Makefile', null],
      ['LICENSE', null],
      ['.bashrc', null],
      ['', null],
    ];
    for (const [path, kind] of cases) expect([path, detectKind(path)]).toEqual([path, kind]);
  });

  it('makes parseFile return nothing for files it does not index', () => {
    expect(parseFile('package.json', '{"name": "millstone", "description": "a long enough description"}')).toEqual([]);
  });
});

describe('token counting', () => {
  it('matches the o200k_base encoding exactly on ordinary text', () => {
    for (const [, name] of FIXTURES) {
      const text = fixture(name);
      expect(countTokens(text)).toBe(referenceCount(text));
    }
    expect(countTokens('')).toBe(0);
  });

  it('reports whether a text fits a limit, with the exact count when it does', () => {
    const text = fixture('getting-started.md');
    const n = referenceCount(text);
    expect(countTokensWithin(text, n)).toBe(n);
    expect(countTokensWithin(text, n - 1)).toBe(false);
    expect(countTokensWithin(text.repeat(50), 1200)).toBe(false);
  });

  it('counts pathological runs of one character class in chunks, close to the exact count', () => {
    for (const run of ['{'.repeat(5000), ' '.repeat(5000), 'ACGT'.repeat(1250), `x = "${'='.repeat(4000)}";`]) {
      const exact = referenceCount(run);
      const approx = countTokens(run);
      expect(Math.abs(approx - exact)).toBeLessThanOrEqual(Math.ceil(run.length / 256) + 2);
    }
  });
});

describe('size cap', () => {
  const paragraphs = Array.from({ length: 24 }, (_, i) => `Paragraph ${i}: ${prose(60, i + 1)}`);
  const md = `# Big\n\n## Section\n\n${paragraphs.join('\n\n')}\n`;

  it('splits an oversized section into titled parts that keep the breadcrumb', () => {
    const parts = parseFile('big.md', md, { maxTokens: 300, overlapTokens: 0 });
    expect(parts.length).toBeGreaterThan(3);
    parts.forEach((p, i) => {
      expect(p.title).toBe(`Section (part ${i + 1}/${parts.length})`);
      expect(p.breadcrumb).toBe('Big > Section');
      expect(p.content.startsWith('Paragraph ')).toBe(true); // cut at paragraph boundaries
    });
    expectWellFormed(parts, 300);
    // Without overlap the parts are exactly the original text, cut between paragraphs.
    expect(parts.map((p) => p.content).join('\n\n')).toBe(paragraphs.join('\n\n'));
  });

  it('overlaps consecutive parts by up to overlapTokens', () => {
    const lines = Array.from({ length: 120 }, (_, i) => `line ${i} ${prose(8, i)}`);
    const parts = parseFile('big.md', `# Log\n\n${lines.join('\n')}`, { maxTokens: 200, overlapTokens: 50 });
    expect(parts.length).toBeGreaterThan(4);
    expectWellFormed(parts, 200);
    for (let i = 1; i < parts.length; i++) {
      const prev = parts[i - 1]!.content.split('\n');
      const cur = parts[i]!.content.split('\n');
      const shared = cur.filter((l) => prev.includes(l));
      expect(shared.length).toBeGreaterThan(0);
      expect(countTokens(shared.join('\n'))).toBeLessThanOrEqual(60);
      expect(cur[0]).toBe(shared[0]); // the shared lines open the next part
    }
    // Every line survives.
    const all = new Set(parts.flatMap((p) => p.content.split('\n')));
    for (const l of lines) expect(all.has(l)).toBe(true);
  });

  it('splits an oversized code block at line boundaries', () => {
    const code = Array.from({ length: 150 }, (_, i) => `const value${i} = compute(${i}, "${prose(3, i)}");`);
    const parts = parseFile('a.md', `Setup code:\n\n\`\`\`js\n${code.join('\n')}\n\`\`\``, { maxTokens: 250 });
    expect(parts.length).toBeGreaterThan(3);
    expectWellFormed(parts, 250);
    for (const p of parts) {
      expect(p.type).toBe('code');
      expect(p.language).toBe('js');
      expect(p.title).toMatch(/^Setup code \(part \d+\/\d+\)$/);
      for (const l of p.content.split('\n')) expect(code).toContain(l);
    }
  });

  it('cuts a single huge line into pieces under the cap', () => {
    const line = Array.from({ length: 30000 }, (_, i) => `w${i}`).join(' ');
    const parts = parseFile('a.md', `# Huge\n\n${line}`, { maxTokens: 500, overlapTokens: 0 });
    expect(parts.length).toBeGreaterThan(10);
    expectWellFormed(parts, 500);
    expect(parts.map((p) => p.content).join(' ').replace(/\s+/g, ' ')).toBe(line);
  });

  it('handles a minified file without whitespace and with surrogate pairs', () => {
    const blob = '😀a=1;'.repeat(20000);
    const parts = parseFile('dist-like.js', blob, { maxTokens: 400 });
    expectWellFormed(parts, 400);
    for (const p of parts) expect(p.content).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });

  it('clamps silly options and falls back to defaults for invalid ones', () => {
    const text = `# T\n\n${prose(400, 3)}`;
    expectWellFormed(parseFile('a.md', text, { maxTokens: 1, overlapTokens: 1000 }), 16);
    expect(parseFile('a.md', text, { maxTokens: Number.NaN, overlapTokens: -5, minChars: Number.POSITIVE_INFINITY })).toEqual(parseFile('a.md', text));
  });
});

describe('determinism and robustness', () => {
  it('gives identical output for identical input, for every fixture', () => {
    for (const [path, name] of FIXTURES) {
      const a = parseFile(path, fixture(name));
      const b = parseFile(path, fixture(name));
      expect(a.length, path).toBeGreaterThan(0);
      expect(b).toEqual(a);
      expectWellFormed(a);
    }
  });

  it('counts text containing special-token markup as plain text', () => {
    const md = '# Tokens\n\nThe model stops at <|endoftext|> and <|im_start|> markers, which are ordinary text here.';
    const [s] = parseFile('a.md', md);
    expect(s!.content).toContain('<|endoftext|>');
    expect(s!.tokenCount).toBeGreaterThan(10);
  });

  it('never throws on random bytes, for every kind', () => {
    const rand = prng(42);
    const exts = ['md', 'mdx', 'rst', 'txt', 'ipynb', 'ts', 'tsx', 'js', 'py', 'go', 'rs', 'java', 'c', 'rb'];
    for (let round = 0; round < 20; round++) {
      const len = Math.floor(rand() * 4000);
      let s = '';
      for (let i = 0; i < len; i++) {
        const r = rand();
        // mostly printable ASCII and syntax characters, some control characters, lone surrogates and astral characters
        s += r < 0.7 ? String.fromCharCode(32 + Math.floor(rand() * 95)) : r < 0.85 ? '\n`#{}"\'/*()[]:=\r\t\\<>-~.'[Math.floor(rand() * 26)] ?? '' : r < 0.95 ? String.fromCharCode(Math.floor(rand() * 0xffff)) : '😀';
      }
      for (const ext of exts) expectWellFormed(parseFile(`f.${ext}`, s));
    }
  });

  it('never throws on mangled fixtures: truncated, unclosed, CRLF, tabs, NULs, BOM', () => {
    const rand = prng(7);
    for (const [path, name] of FIXTURES) {
      const text = fixture(name);
      for (let round = 0; round < 8; round++) {
        let t = text.slice(0, Math.floor(rand() * text.length));
        if (round % 2) t = t.replace(/\n/g, '\r\n');
        if (round % 3 === 0) t = t.replace(/ {4}/g, '\t');
        if (round === 5) t = `\uFEFF${t}\0\0\0`;
        if (round === 6) t = t.replace(/```\n/g, '```\n```py\n');
        expectWellFormed(parseFile(path, t));
      }
    }
  });

  it('never needs the plain-text fallback: the format parsers themselves do not throw on spliced fixtures', () => {
    // parseFile catches everything, so this calls the parsers directly to see errors it would hide.
    const rand = prng(99);
    const texts = FIXTURES.map(([, name]) => fixture(name));
    const noise = '\n\n  `~#{}()[]"\'/\\*<>-=:._!|$@\t';
    for (let round = 0; round < 150; round++) {
      let t = '';
      for (let k = 0; k < 4; k++) {
        const base = texts[Math.floor(rand() * texts.length)]!;
        const at = Math.floor(rand() * base.length);
        t += base.slice(at, at + Math.floor(rand() * 600));
        for (let j = Math.floor(rand() * 20); j > 0; j--) t += noise[Math.floor(rand() * noise.length)];
      }
      t = normalizeNewlines(t);
      const opts = resolveOptions({ maxTokens: 16 + Math.floor(rand() * 300), overlapTokens: Math.floor(rand() * 80) });
      const parsers: (() => RawSnippet[])[] = [
        () => parseMarkdown(t, { mdx: false, frontMatter: true }),
        () => parseMarkdown(t, { mdx: true, frontMatter: true }),
        () => parseRst(t),
        () => parseNotebook(JSON.stringify({ cells: [{ cell_type: 'markdown', source: t }, { cell_type: 'code', source: t }] })),
        ...['a.ts', 'a.py', 'a.go', 'a.rs', 'A.java', 'a.c'].map((p) => () => parseSource(p, t)),
      ];
      for (const parse of parsers) expectWellFormed(assemble(parse(), opts), opts.maxTokens);
    }
  });

  it('survives pathological nesting and very long lines quickly', () => {
    const deep = `${'{'.repeat(50000)}\n${'}'.repeat(50000)}`;
    const quotes = '"'.repeat(30001) + '\n' + '`${'.repeat(10000);
    const fences = '```\n'.repeat(5001);
    const headings = Array.from({ length: 5000 }, (_, i) => `${'#'.repeat((i % 6) + 1)} h${i}`).join('\n');
    for (const [p, t] of [
      ['a.ts', deep],
      ['a.js', quotes],
      ['a.md', fences],
      ['a.md', headings],
      ['a.rst', '=\n'.repeat(20000)],
      ['a.py', '"""\n'.repeat(9999)],
      ['a.md', '<!--'.repeat(100000)],
      ['a.js', '[/['.repeat(100000)],
      ['a.md', `${'![['.repeat(600)}\n`.repeat(50)],
    ] as const) {
      expectWellFormed(parseFile(p, t));
    }
  });

  it('returns [] for non-string input instead of throwing', () => {
    expect(parseFile('a.md', undefined as unknown as string)).toEqual([]);
    expect(parseFile(null as unknown as string, '# x')).toEqual([]);
  });
});
