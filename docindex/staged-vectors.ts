import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../db/sql.js';

/** Batches of staged files whose vectors are computed at once, each on a connection of its own. */
const IN_FLIGHT = 2;
/** Files in a batch of the ones left at the end (an earlier attempt's). */
const BATCH = 100;
/** How often `finish` says it is alive while it waits. */
const BEAT_EVERY_MS = 5000;

/** The distinct values of `field` (null read as empty) of the batch's staged snippets, with their part of the vector; binds the job and the paths. */
const distinctParts = (field: 'title' | 'breadcrumb', part: string) =>
  `select value, ${part}(value) as v from (
     select distinct coalesce(x.${field}, '') as value
     from staged_document d2, jsonb_to_recordset(d2.snippets) as x(${field} text)
     where d2.job_id = ? and d2.vectors is null and d2.file_path = any(${TEXT_ARRAY})
   ) q`;

/**
 * Fills `staged_document.vectors` (each staged snippet's `search_vector`, in order) of those of the job's staged
 * files in `paths` that have none yet, while run `runId` owns the job (jobs/ownership.ts, `owns`); a file with no
 * snippets gets an empty array. A snippet's code words come from the parse thread (docindex/parse/code-words.ts),
 * so PostgreSQL runs no regular expression over its content; one staged without them (by a test, or before they
 * were staged) gets SQL's, which are the same.
 * Its content's part comes put together by the staging (docindex/content-vectors.ts, a vector per snippet in
 * `content_vectors`); one staged without it (null) has PostgreSQL parse the content, which gives the same.
 *
 * Snippets share titles and breadcrumbs (a file's sections, a library's "Usage" or "Parameters"), so their parts of
 * the vector are computed once per distinct value in the batch, first (Migration20261210000000_search_vector_parts:
 * the same vector as `snippet_search_vector`'s; both parts read null as empty, hence the keys). Each row's vectors are
 * still computed from the row as it is updated: a value the batch did not hold when it was read (a file staged again
 * meanwhile) gets its part computed then.
 */
async function fillVectors(em: EntityManager, jobId: string, runId: string, paths: readonly string[]): Promise<void> {
  await em.execute(
    `with t as materialized (${distinctParts('title', 'snippet_title_vector')}),
          b as materialized (${distinctParts('breadcrumb', 'snippet_breadcrumb_vector')})
     update staged_document d set vectors = coalesce((
       select array_agg(snippet_search_vector_of(coalesce(t.v, snippet_title_vector(s.title)), coalesce(b.v, snippet_breadcrumb_vector(s.breadcrumb)),
                                                 s.content_vector, s.content, coalesce(s.code_words, gristmill_identifier_words(s.content))) order by s.n)
       from (select coalesce(r.title, '') as title, coalesce(r.breadcrumb, '') as breadcrumb, r.content, r.code_words, r.content_vector, r.n
             from rows from (jsonb_to_recordset(d.snippets) as (title text, breadcrumb text, content text, "codeWords" text), unnest(d.content_vectors))
               with ordinality as r(title, breadcrumb, content, code_words, content_vector, n)) s
       left join t on t.value = s.title
       left join b on b.value = s.breadcrumb
     ), '{}')
     where d.job_id = ? and d.vectors is null and d.file_path = any(${TEXT_ARRAY})
       and exists (select 1 from job j where j.id = d.job_id and j.run_id = ? and j.completed_at is null)`,
    [jobId, textArray(paths), jobId, textArray(paths), jobId, textArray(paths), runId],
  );
}

/**
 * Computes the keyword vectors of the files a crawl stages while the crawl goes on, on up to IN_FLIGHT connections
 * besides the crawl's, so that the swap only copies them (docindex/pipeline.ts, `swapStaged`): the vectors are most
 * of the cost of writing snippets. The job's owner writes them, checked in the same statement but without the job's
 * lock: a vector depends on its row's snippets only, so one written while the job changes hands is still the right
 * one. A file staged again meanwhile has its vectors emptied, and PostgreSQL re-reads a row updated
 * concurrently before it updates it. A snippet swapped in without a staged vector gets it from the trigger of
 * Migration20261205000000_staged_search_vectors.
 */
export class StagedVectors {
  private readonly queue: { paths: readonly string[]; done: (filled: boolean) => void }[] = [];
  private readonly running = new Set<Promise<void>>();
  private failure: unknown;

  constructor(
    private readonly em: () => EntityManager,
    private readonly jobId: string,
    private readonly runId: string,
    private readonly time: <T>(part: string, work: () => Promise<T>) => Promise<T>,
  ) {}

  /** Queues the vectors of files just staged; resolves whether they were filled (a failure is thrown by `finish`). */
  add(paths: readonly string[]): Promise<boolean> {
    if (!paths.length) return Promise.resolve(true);
    return new Promise((done) => {
      this.queue.push({ paths, done });
      this.pump();
    });
  }

  /**
   * Waits for the queued files, then fills what is left (files an earlier attempt staged) the same way; a failed
   * batch fails here. `beat` is called every BEAT_EVERY_MS meanwhile: a large repository's last batches take a while.
   */
  async finish(beat: () => void = () => undefined): Promise<void> {
    const timer = setInterval(beat, BEAT_EVERY_MS);
    try {
      await this.drain();
      const left: { file_path: string }[] = await this.em().execute(
        `select file_path from staged_document where job_id = ? and vectors is null order by file_path`,
        [this.jobId],
      );
      for (let i = 0; i < left.length; i += BATCH) void this.add(left.slice(i, i + BATCH).map((r) => r.file_path));
      await this.drain();
    } finally {
      clearInterval(timer);
    }
  }

  private async drain(): Promise<void> {
    while (this.running.size) await Promise.all(this.running);
    if (this.failure) throw this.failure;
  }

  private pump(): void {
    while (this.running.size < IN_FLIGHT && this.queue.length) {
      const { paths, done } = this.queue.shift()!;
      const run: Promise<void> = this.time('vectors', () => fillVectors(this.em(), this.jobId, this.runId, paths))
        .then(() => done(true), (err: unknown) => {
          this.failure ??= err;
          done(false);
        })
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
