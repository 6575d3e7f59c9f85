import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSourceGrammars, parseFile } from '../../../docindex/parse/parse.js';
import { withCodeWords } from '../../../docindex/parse/code-words.js';
import { ParsePool } from '../../../docindex/parse/pool.js';

/**
 * Parsing on worker threads (docindex/parse/pool.ts) gives what parseFile gives in this thread with each snippet's
 * code words (docindex/parse/code-words.ts), file by file, in the order asked: the fixtures of every format, this repository's own docs and TypeScript, and a file no format takes.
 */
const fixtures = path.join(import.meta.dirname, 'fixtures');
const repo = path.join(import.meta.dirname, '../../..');
const files: { filePath: string; content: string }[] = [
  ...fs.readdirSync(fixtures).map((name) => ({ filePath: `src/${name.replace(/\.ts\.txt$/, '.ts')}`, content: fs.readFileSync(path.join(fixtures, name), 'utf8') })),
  ...['docs', 'docindex/parse', 'docindex/search'].flatMap((dir) =>
    fs.readdirSync(path.join(repo, dir)).filter((n) => /\.(md|ts)$/.test(n)).map((n) => ({ filePath: `${dir}/${n}`, content: fs.readFileSync(path.join(repo, dir, n), 'utf8') })),
  ),
  { filePath: 'broken.py', content: 'def f(:\n  """unclosed\n'.repeat(50) },
  { filePath: 'image.png', content: 'not parsed' },
];
const pool = new ParsePool(2);
afterAll(() => pool.close());

describe('ParsePool', () => {
  it('gives the same snippets as parsing one file after another in this thread, in the order asked', async () => {
    expect(files.length).toBeGreaterThan(30);
    await loadSourceGrammars(files.map((f) => f.filePath));
    const serial = files.map((f) => withCodeWords(parseFile(f.filePath, f.content)));
    const parallel = await Promise.all(files.map((f) => pool.parse(f.filePath, f.content)));
    expect(parallel).toEqual(serial);
    expect(serial.filter((s) => s.length > 0).length).toBeGreaterThan(30);
    // Tree-sitter was used on the threads too: the Go fixture's snippets are titled by its declarations.
    expect(parallel[files.findIndex((f) => f.filePath.endsWith('.go'))]!.map((s) => s.title)).toEqual(serial[files.findIndex((f) => f.filePath.endsWith('.go'))]!.map((s) => s.title));
  });

  it('starts every thread when warmed, and parses on them after', async () => {
    const warmed = new ParsePool(2);
    try {
      expect(warmed.running).toBe(0);
      await warmed.warm();
      expect(warmed.running).toBe(2);
      expect(await warmed.parse(files[0]!.filePath, files[0]!.content)).toEqual(withCodeWords(parseFile(files[0]!.filePath, files[0]!.content)));
      expect(warmed.running).toBe(2);
    } finally {
      await warmed.close();
    }
  });

  it('parses a file here when its thread dies', async () => {
    const one = new ParsePool(1);
    const pending = one.parse(files[0]!.filePath, files[0]!.content);
    await one.close();
    expect(await pending).toEqual(withCodeWords(parseFile(files[0]!.filePath, files[0]!.content)));
  });
});
