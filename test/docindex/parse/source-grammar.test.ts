import { describe, expect, it } from 'vitest';
import { assemble, resolveOptions } from '../../../docindex/parse/assemble.js';
import { loadSourceGrammars, parseFile } from '../../../docindex/parse/parse.js';
import { parseSource } from '../../../docindex/parse/source.js';
import { treeOutline } from '../../../docindex/parse/code/tree-outline.js';
import { byTitle, fixture, prng } from './helpers.js';

// What only a real grammar gets right: each case here defeats the line lexer (code/line-outline.ts).
await loadSourceGrammars(['a.ts', 'a.tsx', 'a.js', 'a.py', 'a.go', 'a.rs', 'A.java']);

const titles = (path: string, text: string, maxTokens?: number) => parseFile(path, text, { maxTokens }).map((s) => s.title);

describe('TypeScript / JavaScript', () => {
  it('is not misled by JSX text that looks like a comment opener, or by template strings with braces at column 0', () => {
    const tsx = [
      "import React from 'react';",
      '',
      '/** Explains which files are indexed, with a glob in plain JSX text. */',
      'export function Help() {',
      '  return <p>Globs like src/*.ts are matched relative to the repository root, never above it.</p>;',
      '}',
      '',
      'const page = `',
      '}',
      'export function fake() {',
      '`;',
      '',
      '/** The footer shown under every page of the documentation site. */',
      'export function Footer({ year }: { year: number }) {',
      '  return <footer>Copyright {year} Acme; the docs are licensed under CC BY 4.0.</footer>;',
      '}',
    ].join('\n');
    const snippets = parseFile('src/Help.tsx', tsx);
    expect(snippets.map((s) => s.title)).toEqual(['function Help', 'const page', 'function Footer']);
    expect(byTitle(snippets, 'function Footer').content.startsWith('/** The footer shown')).toBe(true);
    expect(byTitle(snippets, 'const page').content).toContain('export function fake() {');
  });

  it('titles a function whose value starts on the next line, and export default / module.exports classes by name', () => {
    const ts = [
      '/** Handles one webhook delivery and acknowledges it to the sender. */',
      'export const handleWebhook =',
      '  async (req: Request): Promise<Response> => {',
      '    const body = await req.json();',
      '    return new Response(JSON.stringify({ ok: true, id: body.id }));',
      '  };',
      '',
      '/** The queue that webhook deliveries are written to before they are handled. */',
      'export default class DeliveryQueue extends Array<string> {',
      '  push(...items: string[]): number { return super.push(...items.filter(Boolean)); }',
      '}',
    ].join('\n');
    expect(titles('src/webhook.ts', ts)).toEqual(['function handleWebhook', 'class DeliveryQueue']);
    const cjs = [
      "'use strict';",
      'const {',
      '  kConnect,',
      '  kClose,',
      "} = require('./symbols');",
      '',
      'module.exports = class Pool extends EventEmitter {',
      '  connect() { return this[kConnect](); }',
      '  close() { return this[kClose](); }',
      '};',
    ].join('\n');
    // The multi-line require is an import, so no preamble snippet is kept for it.
    expect(titles('lib/pool.js', cjs)).toEqual(['class Pool']);
  });
});

describe('Python', () => {
  it('keeps decorators and the docstring with a class, and splits a class of one huge method at its statements', () => {
    const steps = Array.from({ length: 20 }, (_, i) => [`        self.step_${i} = compute_step(`, `            ${i}, source="row-${i}",`, ...Array<string>(i % 4).fill('            retries=3,'), '        )'].join('\n'));
    const py = [
      '"""Millstone workers: the process that polls the queue and runs jobs."""',
      'import os',
      '',
      '',
      '@dataclass(frozen=True)',
      '@register("worker")',
      'class Worker:',
      '    """A worker bound to one queue."""',
      '',
      '    def run(self) -> None:',
      ...steps,
    ].join('\n');
    const parts = parseFile('millstone/worker.py', py, { maxTokens: 200, overlapTokens: 0 });
    expect(parts[0]!.title).toBe('worker.py');
    const worker = parts.slice(1);
    expect(worker.length).toBeGreaterThan(2);
    expect(worker[0]!.content.startsWith('@dataclass(frozen=True)\n@register("worker")\nclass Worker:\n    """A worker bound to one queue."""')).toBe(true);
    // Windows end between statements of run(), never inside one: every later part starts with a statement.
    for (const p of worker.slice(1)) expect(p.content.startsWith('        self.step_')).toBe(true);
  });
});

describe('Go', () => {
  it('titles methods by their receiver and a grouped type declaration by its names', () => {
    const go = [
      'package queue',
      '',
      '// Reader and Writer are the two halves of a queue connection; a Conn has both.',
      'type (',
      '\tReader interface{ Read() (Job, error) }',
      '\tWriter interface{ Write(Job) error }',
      ')',
      '',
      '// Push appends a job to the list and wakes one waiting reader, if there is one.',
      'func (l *List[T]) Push(v T) {',
      '\tl.items = append(l.items, v)',
      '\tl.cond.Signal()',
      '}',
    ].join('\n');
    const snippets = parseFile('queue/list.go', go);
    expect(snippets.map((s) => s.title)).toEqual(['type (Reader, Writer), func List.Push']);
    expect(snippets[0]!.content.startsWith('// Reader and Writer')).toBe(true);
  });
});

describe('Rust', () => {
  it('attaches attributes and doc comments to an impl with a where clause, and keeps an extern block apart', () => {
    const rs = [
      'use std::fmt;',
      '',
      '/// Shows the wrapped value with its unit, e.g. `12 ms`.',
      '#[allow(clippy::needless_lifetimes)]',
      '#[cfg(feature = "display")]',
      'impl<T> fmt::Display for Measured<T>',
      'where',
      '    T: fmt::Display,',
      '{',
      '    fn fmt(&self, f: &mut fmt::Formatter<\'_>) -> fmt::Result {',
      '        write!(f, "{} {}", self.value, self.unit)',
      '    }',
      '}',
      '',
      '/// The C library this crate links against for its clock source.',
      'extern "C" {',
      '    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;',
      '    fn clock_getres(clock: i32, ts: *mut Timespec) -> i32;',
      '}',
    ].join('\n');
    const snippets = parseFile('src/measure.rs', rs);
    expect(snippets.map((s) => s.title)).toEqual(['impl fmt::Display for Measured<T>', 'extern "C"']);
    expect(snippets[0]!.content.startsWith('/// Shows the wrapped value with its unit, e.g. `12 ms`.\n#[allow(clippy::needless_lifetimes)]\n#[cfg(feature = "display")]\nimpl<T>')).toBe(true);
    expect(snippets[1]!.content.startsWith('/// The C library')).toBe(true);
  });
});

describe('Java', () => {
  it('finds a class whose annotations share its line, with its Javadoc, nested classes inside it', () => {
    const java = [
      'package dev.acme.users;',
      '',
      'import jakarta.persistence.Entity;',
      '',
      '/**',
      ' * A user account: one row of the users table, keyed by its e-mail address.',
      ' */',
      '@Entity @Table(name = "users") public class User {',
      '    @Id private String email;',
      '',
      '    /** The account settings, stored inline. */',
      '    public static class Settings { boolean newsletter; }',
      '}',
      '',
      '/** Read access to users by e-mail address, for the login flow. */',
      '@Repository public interface UserRepository extends CrudRepository<User, String> {',
      '    Optional<User> findByEmail(String email);',
      '}',
    ].join('\n');
    const snippets = parseFile('src/main/java/dev/acme/users/User.java', java);
    expect(snippets.map((s) => s.title)).toEqual(['class User', 'interface UserRepository']);
    expect(snippets[0]!.content.startsWith('/**\n * A user account')).toBe(true);
    expect(snippets[0]!.content).toContain('public static class Settings');
  });
});

describe('robustness', () => {
  it('leaves a file to the line lexer when the grammar cannot read its top level, or the parse runs out of time', () => {
    // Merge conflict markers: the grammar folds the functions around them into expression statements.
    const conflict = ['function first() {', '  return 1;', '}', '<<<<<<< HEAD', 'function second() { return 2; }', '=======', 'function second() { return 3; }', '>>>>>>> feature', 'function third() { return 4; }'].join('\n');
    expect(treeOutline('js', 'js', conflict, 9)).toBeNull();
    expect(titles('lib/conflict.js', conflict)).toEqual(['function first, function second, function second, function third']);
    // Thousands of unclosed strings send the grammar's error recovery into a search of seconds.
    const quotes = '"'.repeat(30001) + '\n' + '`${'.repeat(10000);
    const t0 = performance.now();
    expect(treeOutline('js', 'js', quotes, 2)).toBeNull();
    expect(parseFile('a.js', quotes).length).toBeGreaterThan(0);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('never throws on spliced fixtures, and every snippet is a slice of the file', () => {
    const rand = prng(5);
    const texts = ['router.ts.txt', 'client.py', 'server.go', 'lib.rs', 'Cache.java'].map(fixture);
    for (let round = 0; round < 30; round++) {
      let t = '';
      for (let k = 0; k < 4; k++) {
        const base = texts[Math.floor(rand() * texts.length)]!;
        const at = Math.floor(rand() * base.length);
        t += base.slice(at, at + Math.floor(rand() * 800)) + '\n}\n)"\'`/*'.slice(0, Math.floor(rand() * 10));
      }
      for (const path of ['a.ts', 'a.tsx', 'a.js', 'a.py', 'a.go', 'a.rs', 'A.java']) {
        const raws = parseSource(path, t);
        for (const r of raws) expect(t).toContain(r.content);
        expect(() => assemble(raws, resolveOptions({ maxTokens: 100 }))).not.toThrow();
      }
    }
  });
});
