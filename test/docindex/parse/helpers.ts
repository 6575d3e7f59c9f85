import fs from 'node:fs';
import type { ParsedSnippet } from '../../../docindex/parse/parse.js';

export function fixture(name: string): string {
  return fs.readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** The snippets as compact rows, for readable assertions. */
export function rows(snippets: ParsedSnippet[]): { type: string; title: string | null; breadcrumb: string | null; language: string | null }[] {
  return snippets.map((s) => ({ type: s.type, title: s.title, breadcrumb: s.breadcrumb, language: s.language }));
}

export function byTitle(snippets: ParsedSnippet[], title: string): ParsedSnippet {
  const s = snippets.find((x) => x.title === title);
  if (!s) throw new Error(`no snippet titled ${JSON.stringify(title)} in ${JSON.stringify(snippets.map((x) => x.title))}`);
  return s;
}

/** Deterministic pseudo-random numbers (mulberry32), so fuzz tests are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words for generated prose. */
export function prose(words: number, seed = 1): string {
  const vocab = 'queue job worker retry backoff database table index snippet token window overlap parser heading section breadcrumb library version branch commit config rule folder file path the a of to and in is with for on'.split(' ');
  const rand = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    let w = vocab[Math.floor(rand() * vocab.length)]!;
    if (i % 12 === 0) w = w[0]!.toUpperCase() + w.slice(1);
    out.push(i % 12 === 11 ? `${w}.` : w);
  }
  return out.join(' ');
}
