/**
 * Throughput of parseFile on ~20 MB of real Markdown and source files taken from node_modules (READMEs, docs,
 * TypeScript declarations, JavaScript) plus the test fixtures. Not a test: run it by hand with
 *
 *   node --import tsx test/docindex/parse/parse-throughput.ts [megabytes]
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens, detectKind, parseFile } from '../../../docindex/parse/parse.js';

const targetBytes = Number(process.argv[2] ?? 20) * 1024 * 1024;
const root = path.resolve(import.meta.dirname, '../../../node_modules');
const byKind = new Map<string, { path: string; text: string }[]>();

function walk(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(p);
    else if (entry.isFile()) {
      const kind = detectKind(p);
      if (!kind) continue;
      const size = fs.statSync(p).size;
      if (size > 2_000_000 || size < 200) continue;
      const ext = path.extname(p);
      const list = byKind.get(ext) ?? [];
      list.push({ path: path.relative(root, p), text: fs.readFileSync(p, 'utf8') });
      byKind.set(ext, list);
    }
  }
}
walk(root);

// Half Markdown, half source, round-robin over the source extensions.
const files: { path: string; text: string }[] = [];
let bytes = 0;
const md = [...(byKind.get('.md') ?? []), ...(byKind.get('.mdx') ?? [])];
const source = [...byKind.entries()].filter(([ext]) => !['.md', '.mdx', '.txt', '.markdown'].includes(ext)).map(([, list]) => list);
for (let i = 0; bytes < targetBytes && i < 1e6; i++) {
  const pick = i % 2 === 0 ? md[(i / 2) % md.length] : source[i % source.length]?.[Math.floor(i / 2 / source.length) % (source[i % source.length]?.length ?? 1)];
  if (!pick) continue;
  files.push(pick);
  bytes += Buffer.byteLength(pick.text);
}

countTokens('warm up the encoder');
for (const f of files.slice(0, 200)) parseFile(f.path, f.text); // JIT warm-up

const t0 = performance.now();
let snippets = 0;
let tokens = 0;
for (const f of files) {
  const out = parseFile(f.path, f.text);
  snippets += out.length;
  for (const s of out) tokens += s.tokenCount;
}
const seconds = (performance.now() - t0) / 1000;
// For scale: the tokenizer alone, one pass over the same text.
const t1 = performance.now();
for (const f of files) countTokens(f.text);
const tokenizerSeconds = (performance.now() - t1) / 1000;

const mix = new Map<string, number>();
for (const f of files) mix.set(path.extname(f.path), (mix.get(path.extname(f.path)) ?? 0) + Buffer.byteLength(f.text));
console.log(`${files.length} files, ${(bytes / 1048576).toFixed(1)} MB (${[...mix].map(([e, b]) => `${e} ${(b / 1048576).toFixed(1)}`).join(', ')})`);
console.log(`${snippets} snippets, ${tokens} tokens in ${seconds.toFixed(2)} s: ${(bytes / 1048576 / seconds).toFixed(1)} MB/s`);
console.log(`tokenizer alone over the same text: ${tokenizerSeconds.toFixed(2)} s (${(bytes / 1048576 / tokenizerSeconds).toFixed(1)} MB/s)`);
