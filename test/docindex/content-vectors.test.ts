import fs from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { TEXT_ARRAY, textArray } from '../../db/sql.js';
import { ContentVectors, unnumbered } from '../../docindex/content-vectors.js';
import { migratedDatabase } from '../support/migrated-database.js';

/**
 * A content's part of the keyword vector put together in Node (docindex/content-vectors.ts) is the vector PostgreSQL
 * computes from the whole text, lexemes, positions and weights, or null where it cannot be told from the chunks.
 */
const db = migratedDatabase();

/** PostgreSQL's content part of `snippet_search_vector_of`, of the column `t`. */
const REFERENCE = `setweight(to_tsvector('simple', gristmill_unnumbered(t)) || to_tsvector('english', gristmill_unnumbered(t)), 'C')`;

/**
 * Each content's vector as PostgreSQL reads it from the binary array (as text, null where PostgreSQL computes it),
 * and those that differ from PostgreSQL's vector, both as text.
 */
async function compare(contents: string[]): Promise<{ literals: (string | null)[]; differ: { t: string; ours: string; theirs: string }[] }> {
  const vectors = await new ContentVectors().of(db.orm().em.fork(), contents);
  const { rows } = (await db.orm().em.getKnex().raw(
    `select u.t, x.v::text as plain, setweight(x.v, 'C')::text as ours, ${REFERENCE}::text as theirs
     from unnest(${TEXT_ARRAY}) with ordinality as u(t, n) join unnest(?::tsvector[]) with ordinality as x(v, n) using (n) order by n`,
    [textArray(contents), vectors],
  )) as { rows: { t: string; plain: string | null; ours: string | null; theirs: string }[] };
  expect(rows.length).toBe(contents.length);
  const differ = rows.filter((r) => r.ours !== null && r.ours !== r.theirs).map(({ t, ours, theirs }) => ({ t, ours: ours!, theirs }));
  return { literals: rows.map((r) => r.plain), differ };
}

/** Which elements of a binary `tsvector[]` (array_send's form) are null. */
function nulls(array: Buffer): boolean[] {
  if (array.readInt32BE(0) === 0) return [];
  const out: boolean[] = [];
  let at = 20;
  for (let i = 0; i < array.readInt32BE(12); i++) {
    const length = array.readInt32BE(at);
    out.push(length < 0);
    at += 4 + Math.max(0, length);
  }
  expect(at).toBe(array.length);
  return out;
}

const SAME = [
  '1. Install it.\n2) Run `deployAll()` before the HTTPServer starts.',
  '  3. indented\r\n4. after a carriage return\r\n> 5. quoted\n6.no space\n1234567890. too long',
  'Die `connectionPool` hält Verbindungen offen 🚀. Überblick: naïve café, ÉCOLE.',
  "it's a \\ backslash, 'quoted' and \"double\" and O'Reilly's \\\\server\\share",
  'reply.send() fastify.register(plugin) https://example.com/docs/page?x=1#anchor user@example.com /usr/local/bin/node ~/config ~high',
  'v1.2.3 -5 +3 1e-10 3.14 .5 foo-bar-baz self-hosted co-operate 2nd-level x86-64 snake_case_name __proto__ $ref @scope/pkg',
  '  leading blanks\tand\ttabs  ',
  '',
  '   \n\t ',
  'a\n\n\nb\r\rc',
  '&amp; &lt;tag&gt; &#x27; <br/> Array<string> Map<K,V> a < b && c > d',
  'if (i < n && x<=y || 1<2 || a <- b) { return <b>bold</b> <éb c> d }',
  "x < y && z > 0 <a>link</a> text <img/> and 'quoted <b> words'",
  'the and of a to be or not to be, that is the question the',
  'x'.repeat(3000) + ' ' + 'y'.repeat(10),
  'word '.repeat(100) + 'end',
  '```ts\nexport function step(input: Input): Output {\n  return pipeline.run(input, { retries: 3 });\n}\n```',
];

describe('ContentVectors', () => {
  it('gives the vector PostgreSQL computes from the whole text', async () => {
    const { literals, differ } = await compare(SAME);
    expect(differ).toEqual([]);
    expect(literals.every((l) => l !== null)).toBe(true);
    expect(literals[7]).toBe('');
  });

  it('gives the vector PostgreSQL computes from random text of the characters its parser treats apart', async () => {
    // Hosts, URLs, e-mails, paths, versions, numbers, hyphens, entities, numbering, quotes and blanks of every kind,
    // strung together at random (a fixed seed): 6,000 snippets, a third with tags.
    const pieces = ['a', 'Z', 'the', 'foo', 'é', 'ß', '1', '0', '.', '..', '-', '--', '/', '@', ':', '://', '~', '>', '&', ';', '#', '?',
      '=', '"', "'", '\\', '_', '+', ',', '!', 'http', 'www', 'com', 'x1', '1e5', '3.14', ' ', ' ', '  ', '\n', '\t', '\r\n', '1. ',
      '\n2) ', '&amp;', '&#39;', '🚀', 'v1.2.3', 'a-b', 'user@host.com', '/usr/bin', 'C:\\x', '-->', '*', '%', '$', '(', ')', '[',
      '{', '|', '`', '\u00a0', '\f', '\v'];
    const tags = ['<', '<b>', '</b>', '<!--', '<a href="x">', 'Map<K, V>'];
    let seed = 7;
    const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), Math.floor((seed / 2 ** 32) * n));
    const texts = Array.from({ length: 6000 }, (_, i) => {
      const from = i % 3 === 0 ? [...pieces, ...tags] : pieces;
      return Array.from({ length: 3 + random(40) }, () => from[random(from.length)]).join('');
    });
    const { literals, differ } = await compare(texts);
    expect(differ.slice(0, 3)).toEqual([]);
    expect(literals.filter((l) => l === null).length).toBeLessThan(2000);
  });

  it('leaves to PostgreSQL what spans a blank or what it would truncate', async () => {
    const left = [
      '<a href="https://example.com">link</a> text',
      '<a-b="x>y" c> inside a tag',
      'Map<K, V> is a tag to PostgreSQL',
      'x <?xml version="1.0"?> y',
      '<!DOCTYPE html> z',
      'a </b c> d',
      'a <:b c> d',
      'a <_b c> d',
      'before <!--comment--> after',
      'before <!-- a comment --> after',
      '<script>var hidden = 1;</script> shown',
      '<STYLE>p { color: red }</STYLE> shown',
      'word '.repeat(300),
      // A parse keeps 255 positions of a lexeme (MAXNUMPOS - 1): `english` drops the stop word, so `simple` alone has it.
      'the '.repeat(256),
      Array.from({ length: 17_000 }, (_, i) => `w${i}`).join(' '),
    ];
    const { literals } = await compare(left);
    expect(literals).toEqual(left.map(() => null));
  });

  it('gives an empty array for no contents', async () => {
    const vectors = await new ContentVectors().of(db.orm().em.fork(), []);
    const { rows } = (await db.orm().em.getKnex().raw(`select cardinality(?::tsvector[]) as n`, [vectors])) as { rows: { n: number }[] };
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('asks PostgreSQL for each distinct chunk once', async () => {
    const em = db.orm().em.fork();
    let asked = 0;
    const counting = { execute: (q: string, p: unknown[]) => ((asked += 1), em.execute(q, p)) } as unknown as EntityManager;
    const vectors = new ContentVectors();
    const first = await vectors.of(counting, ['alpha beta', 'beta gamma alpha']);
    expect(nulls(first)).toEqual([false, false]);
    // Chunks that begin a content and chunks after a blank are parsed apart: one statement each.
    expect(asked).toBe(2);
    expect(await vectors.of(counting, ['alpha beta', 'beta gamma alpha'])).toEqual(first);
    expect(asked).toBe(2);
  });

  it('asks for at most 50,000 new chunks a call, leaving the contents past that to PostgreSQL', async () => {
    const em = db.orm().em.fork();
    const asked: number[] = [];
    const counting = {
      execute: (q: string, p: unknown[]) => (asked.push((JSON.parse(p[2] as string) as string[]).length), em.execute(q, p)),
    } as unknown as EntityManager;
    const words = (from: number, n: number) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');
    const vectors = await new ContentVectors().of(counting, ['alpha beta', words(0, 30_000), words(30_000, 30_000), 'beta alpha']);
    expect(nulls(vectors)).toEqual([false, true, true, false]);
    // 30,000 is under the limit but over a vector's 16,383 positions: asked for, then left to PostgreSQL too.
    expect(asked.reduce((a, b) => a + b, 0)).toBe(30_004);
  });

  it('gives the same vectors on real files cut anywhere', async () => {
    // Markdown and JavaScript as installed packages ship them, cut about every 700 characters (mid-word, mid-tag).
    const root = path.resolve('node_modules');
    const files: string[] = [];
    for (const name of fs.readdirSync(root).sort()) {
      for (const file of ['README.md', 'index.js']) {
        const p = path.join(root, name, file);
        if (fs.existsSync(p) && fs.statSync(p).size < 200_000) files.push(p);
      }
      if (files.length >= 400) break;
    }
    const contents: string[] = [];
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8').replaceAll('\0', '');
      for (let i = 0; i < text.length; ) {
        // Not between the halves of a surrogate pair: a snippet is text, and PostgreSQL refuses half a character.
        const end = Math.min(text.length, i + 700 + (/[\uD800-\uDBFF]/.test(text[i + 699] ?? '') ? 1 : 0));
        contents.push(text.slice(i, end));
        i = end;
      }
    }
    expect(contents.length).toBeGreaterThan(2000);
    const { literals, differ } = await compare(contents);
    expect(differ.slice(0, 3)).toEqual([]);
    // Most are put together in Node; the rest hold a tag or comment across a blank.
    expect(literals.filter((l) => l !== null).length / contents.length).toBeGreaterThan(0.8);
  });
});

describe('unnumbered', () => {
  it('drops list numbering where gristmill_unnumbered does', async () => {
    const texts = ['1. a\n2) b\n  3. c\n> 4. d\n5.e\n6.\n7.\r\n8)\tf', '10. x\r\n11. y', 'no 1. numbering mid-line'];
    const [row] = await db.sql<{ theirs: string[] }>(`select array_agg(gristmill_unnumbered(t) order by n) as theirs from unnest(${TEXT_ARRAY}) with ordinality as u(t, n)`, [textArray(texts)]);
    expect(texts.map(unnumbered)).toEqual(row!.theirs);
  });
});
