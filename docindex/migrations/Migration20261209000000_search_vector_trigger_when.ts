import { Migration } from '@mikro-orm/migrations';

/**
 * The trigger of Migration20261205000000_staged_search_vectors, split in two so that an insert that brings its vector
 * (the swap's, docindex/pipeline.ts `swapStaged`: every snippet a first index writes) does not call PL/pgSQL per row:
 * the `when` clause is checked without calling the function (issue 24: for the 33,841 snippets of `npm run bench --
 * index`, 0.4 s of a bulk insert measured alone under load, about 0.1 s of the swap in the benchmark). What the trigger does is unchanged: an insert without a vector gets
 * `snippet_search_vector`'s, and an update of the title, breadcrumb or content computes it again.
 */
export class Migration20261209000000_search_vector_trigger_when extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger if exists "snippet_search_vector_fill" on "snippet";`);
    this.addSql(`create trigger "snippet_search_vector_fill" before insert on "snippet"
  for each row when (new.search_vector is null) execute function snippet_search_vector_fill();`);
    this.addSql(`create trigger "snippet_search_vector_refill" before update of "title", "breadcrumb", "content" on "snippet"
  for each row execute function snippet_search_vector_fill();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "snippet_search_vector_refill" on "snippet";`);
    this.addSql(`drop trigger if exists "snippet_search_vector_fill" on "snippet";`);
    this.addSql(`create trigger "snippet_search_vector_fill" before insert or update of "title", "breadcrumb", "content" on "snippet"
  for each row execute function snippet_search_vector_fill();`);
  }
}
