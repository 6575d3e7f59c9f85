import { Migration } from '@mikro-orm/migrations';

/**
 * `snippet_search_vector` in three parts, so the staged vectors' fill (docindex/staged-vectors.ts) computes a title's
 * and a breadcrumb's part once per distinct value of a file, not once per snippet (issue 24: over the 33,841 snippets
 * of `npm run bench -- index`, about 0.7 s for the titles and 0.5 s for the breadcrumbs, mostly the per-call cost of
 * four short `to_tsvector` calls and three regular expressions, while a file's snippets mostly share them).
 *
 * The vectors are the same, byte for byte: `snippet_title_vector` and `snippet_breadcrumb_vector` are the title's and
 * the breadcrumb's weighted parts of Migration20261208000000_search_identifier_words' function, and
 * `snippet_search_vector_of` joins them to the content's parts in the same order (`||` shifts the right operand's
 * positions, so the order and grouping are kept). Both parts read a null value as an empty one. The four-argument
 * function, and through it the trigger's three-argument one, now call the parts: no stored or staged vector changes.
 */
export class Migration20261210000000_search_vector_parts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function snippet_title_vector(title text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', t || ' ' || gristmill_split_identifiers(t)) || to_tsvector('english', t), 'A')
  from (select gristmill_unnumbered(title) as t) f
$$;`);
    this.addSql(`create or replace function snippet_breadcrumb_vector(breadcrumb text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', b || ' ' || gristmill_split_identifiers(b)) || to_tsvector('english', b), 'B')
  from (select regexp_replace(coalesce(breadcrumb, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b) f
$$;`);
    this.addSql(`create or replace function snippet_search_vector_of(title_vector tsvector, breadcrumb_vector tsvector, content text, code_words text) returns tsvector language sql immutable parallel safe as $$
  select title_vector || breadcrumb_vector
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', coalesce(code_words, '')), 'D')
  from (select gristmill_unnumbered(content) as c) f
$$;`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text, code_words text) returns tsvector language sql immutable parallel safe as $$
  select snippet_search_vector_of(snippet_title_vector(title), snippet_breadcrumb_vector(breadcrumb), content, code_words)
$$;`);
  }

  override async down(): Promise<void> {
    // Migration20261208000000_search_identifier_words' function.
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text, code_words text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', t || ' ' || gristmill_split_identifiers(t)) || to_tsvector('english', t), 'A')
      || setweight(to_tsvector('simple', b || ' ' || gristmill_split_identifiers(b)) || to_tsvector('english', b), 'B')
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', coalesce(code_words, '')), 'D')
  from (select gristmill_unnumbered(title) as t, regexp_replace(coalesce(breadcrumb, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b,
               gristmill_unnumbered(content) as c) f
$$;`);
    this.addSql(`drop function if exists snippet_search_vector_of(tsvector, tsvector, text, text);`);
    this.addSql(`drop function if exists snippet_breadcrumb_vector(text);`);
    this.addSql(`drop function if exists snippet_title_vector(text);`);
  }
}
