/**
 * Hybrid figures in seconds instead of an embedding run: the keyword lists of one quality run and the semantic lists
 * of another, dumped by `QUALITY_DUMP=<file> npm run bench -- quality` (bench/quality.ts), are fused again here with
 * the search's own `fuse`, `fusionAlpha` and `distinctResults`, and scored per corpus as the benchmark scores them. So a
 * keyword change can be judged in hybrid without embedding again, as long as the snippets are the same (a snippet is
 * known by its file and a hash of its text, since ids change from run to run).
 *
 *   npx tsx bench/quality-fusion.ts <keyword dump> [<semantic dump>] [corpus]
 *
 * The dumps hold each list's first 50 results as the context endpoint answers them (already made distinct), where the
 * search fuses its first 100 of each before that step: the figures can differ from the benchmark's by a question or
 * two (0.01 to 0.02 of MRR@10), so a change chosen here is measured through the benchmark before it is kept.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { distinctResults } from '../docindex/search/distinct.js';
import { fuse, fusionAlpha } from '../docindex/search/search.js';

export interface DumpedAnswer {
  library: string;
  question: string;
  mode: string;
  alpha?: number;
  target: string;
  /** Across libraries (the `across` phase), each result's library too. */
  results: { key: string; filePath: string; type?: string; score?: number; libraryId?: string }[];
}
interface Question {
  library: string;
  question: string;
  answers: string[];
}
type Listed = DumpedAnswer['results'][number];

const ALPHA = 0.5;

async function lists(file: string, mode: string): Promise<Map<string, Listed[]>> {
  const dump = JSON.parse(await fs.readFile(file, 'utf8')) as DumpedAnswer[];
  const out = new Map<string, Listed[]>();
  for (const a of dump) if (a.mode === mode && a.alpha === undefined && a.target === 'folder') out.set(`${a.library}|${a.question}`, a.results);
  return out;
}

function metrics(ranks: (number | null)[]) {
  const n = ranks.length || 1;
  const hit = (k: number) => ranks.filter((r) => r !== null && r <= k).length / n;
  const mrr = ranks.reduce<number>((s, r) => s + (r !== null && r <= 10 ? 1 / r : 0), 0) / n;
  return `hit@1 ${hit(1).toFixed(2)}  hit@5 ${hit(5).toFixed(2)}  MRR@10 ${mrr.toFixed(3)}`;
}

/** Fused as the search fuses (scores are ranks: the lists are already in order), then made distinct as an answer is. */
function hybrid(question: string, keyword: Listed[], semantic: Listed[]): Listed[] {
  const byKey = new Map([...keyword, ...semantic].map((r) => [r.key, r]));
  const ranked = (list: Listed[]) => list.map((r, i) => ({ id: r.key, score: list.length - i }));
  const fused = fuse(ranked(keyword), ranked(semantic), fusionAlpha(ALPHA, question), 50).map((r) => byKey.get(r.id)!);
  return distinctResults(fused.map((r) => ({ ...r, type: r.type ?? 'info', content: r.key.split('#')[1]!, documentId: r.filePath, score: 0 })));
}

async function main() {
  const [keywordDump, semanticDump, only] = process.argv.slice(2);
  if (!keywordDump) throw new Error('usage: npx tsx bench/quality-fusion.ts <keyword dump> [<semantic dump>] [corpus]');
  const keyword = await lists(keywordDump, 'keyword');
  const semantic = await lists(semanticDump ?? keywordDump, 'semantic');
  const dir = path.join(import.meta.dirname, 'quality');
  for (const file of (await fs.readdir(dir)).filter((f) => f.endsWith('.json')).sort()) {
    const corpus = file.replace(/\.json$/, '');
    if (only && only !== corpus) continue;
    const { questions } = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as { questions: Question[] };
    const rank = (list: Listed[] | undefined, q: Question) => {
      const at = list?.findIndex((r) => q.answers.includes(r.filePath)) ?? -1;
      return at < 0 ? null : at + 1;
    };
    const asked = questions.filter((q) => keyword.has(`${q.library}|${q.question}`));
    if (!asked.length) continue;
    console.log(`${corpus}: ${asked.length} questions`);
    console.log(`  keyword   ${metrics(asked.map((q) => rank(keyword.get(`${q.library}|${q.question}`), q)))}`);
    const both = asked.filter((q) => semantic.has(`${q.library}|${q.question}`));
    if (both.length < asked.length) continue;
    console.log(`  semantic  ${metrics(both.map((q) => rank(semantic.get(`${q.library}|${q.question}`), q)))}`);
    const fused = both.map((q) => rank(hybrid(q.question, keyword.get(`${q.library}|${q.question}`)!, semantic.get(`${q.library}|${q.question}`)!), q));
    console.log(`  hybrid    ${metrics(fused)}`);
  }
}

await main();
