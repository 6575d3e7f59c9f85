import { describe, expect, it } from 'vitest';
import { loadSourceGrammars, parseFile } from '../../../docindex/parse/parse.js';
import { scanBraceLines, scanPythonLines } from '../../../docindex/parse/lexer.js';
import { fixture, rows } from './helpers.js';
import { sourceCases } from './source-cases.js';

// Source files split by their tree-sitter syntax tree; source-lexer.test.ts runs the same cases without grammars.
await loadSourceGrammars(['a.ts', 'a.tsx', 'a.js', 'a.py', 'a.go', 'a.rs', 'A.java']);

sourceCases();

describe('languages without a scanner', () => {
  it('index a small file as one snippet titled by the file name', () => {
    const s = parseFile('clients/c/ring.c', fixture('ring.c'));
    expect(rows(s)).toEqual([{ type: 'code', title: 'ring.c', breadcrumb: 'clients/c/ring.c', language: 'c' }]);
  });

  it('cut large files into overlapping windows of lines', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `    puts "line ${i}: processing record #{record_${i}.id} for queue #{queue.name}"`);
    const ruby = `def process(queue)\n${lines.join('\n')}\nend\n`;
    const parts = parseFile('lib/process.rb', ruby, { maxTokens: 300, overlapTokens: 60 });
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.every((p) => p.language === 'ruby' && p.tokenCount <= 300)).toBe(true);
    for (let i = 1; i < parts.length; i++) {
      const prevLines = parts[i - 1]!.content.split('\n');
      const firstLine = parts[i]!.content.split('\n')[0]!;
      expect(prevLines).toContain(firstLine); // overlap: the next window starts inside the previous one
    }
  });

  it('detect languages from the extension', () => {
    const langs = ['a.ts', 'a.mts', 'a.cjs', 'a.jsx', 'a.pyi', 'a.kt', 'a.cs', 'a.cpp', 'a.hpp', 'a.sh', 'a.swift', 'a.scala', 'a.php'].map(
      (f) => parseFile(f, 'value = compute(1, 2, 3) // a line of code long enough to be indexed')[0]?.language,
    );
    expect(langs).toEqual(['ts', 'ts', 'js', 'jsx', 'python', 'kotlin', 'csharp', 'cpp', 'cpp', 'bash', 'swift', 'scala', 'php']);
  });
});

describe('lexer', () => {
  it('tracks depth, strings and comments per line for JS', () => {
    const src = ['const a = `x ${', '  { b: "}" }', '} y', '`;', '/* {', ' */ const re = /[{]/;', 'f(a / 2, b) // {'].join('\n');
    expect(scanBraceLines(src, 'js').map((l) => [l.depth, l.inString, l.inComment, l.hasCode])).toEqual([
      [0, false, false, true],
      [1, false, false, true],
      [1, false, false, true],
      [0, true, false, true],
      [0, false, false, false],
      [0, false, true, true],
      [0, false, false, true],
    ]);
  });

  it('tracks triple-quoted strings and brackets for Python', () => {
    const src = ['x = """', 'def f(): {', '"""', 'y = (1,', "  2)  # ) '''", 'z = 1'].join('\n');
    expect(scanPythonLines(src).map((l) => [l.depth, l.inString])).toEqual([
      [0, false],
      [0, true],
      [0, true],
      [0, false],
      [1, false],
      [0, false],
    ]);
  });

  it('emits exactly one entry per line, even for an escaped newline inside a would-be regex', () => {
    for (const src of ['/\\\n/', 'a = /x\\\ny/;\nb', '`${\n}`\n', "'\\\n'"]) {
      expect(scanBraceLines(src, 'js')).toHaveLength(src.split('\n').length);
    }
  });

  it('handles Rust raw strings, lifetimes and nested comments, Go raw strings and Java text blocks', () => {
    expect(scanBraceLines('let s = r#"{\n"#;\nfn f<\'a>() {}', 'rust').map((l) => [l.depth, l.inString])).toEqual([
      [0, false],
      [0, true],
      [0, false],
    ]);
    expect(scanBraceLines('/* a /* b */ { */\nfn x() {', 'rust').map((l) => l.depth)).toEqual([0, 0]);
    expect(scanBraceLines('s := `{\n`\nfunc f() {', 'go').map((l) => [l.depth, l.inString])).toEqual([
      [0, false],
      [0, true],
      [0, false],
    ]);
    expect(scanBraceLines('String s = """\n  {\n  """;\nclass A {', 'java').map((l) => [l.depth, l.inString])).toEqual([
      [0, false],
      [0, true],
      [0, true],
      [0, false],
    ]);
  });
});
