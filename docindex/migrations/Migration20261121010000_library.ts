import { Migration } from '@mikro-orm/migrations';

/** The documentation index: libraries, versions, documents, snippets, embeddings, rules, settings. */
export class Migration20261121010000_library extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "library" ("id" varchar(255) not null, "title" varchar(255) not null, "description" text null, "source" varchar(255) not null, "source_url" text not null, "branch" varchar(255) null, "git_host_token" text null, "state" varchar(255) not null default 'pending', "total_snippets" int not null default 0, "trust_score" double precision not null default 0, "last_indexed_at" timestamptz null, "last_commit" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "library_pkey" primary key ("id"));`);
    this.addSql(`create table "library_version" ("id" varchar(255) not null, "repository_id" varchar(255) not null, "tag" varchar(255) not null, "title" varchar(255) null, "commit_hash" varchar(255) null, "state" varchar(255) not null default 'pending', "total_snippets" int not null default 0, "indexed_at" timestamptz null, "created_at" timestamptz not null, constraint "library_version_pkey" primary key ("id"));`);
    this.addSql(`alter table "library_version" add constraint "library_version_repository_id_tag_unique" unique ("repository_id", "tag");`);
    this.addSql(`create table "library_rules" ("id" varchar(255) not null, "repository_id" varchar(255) not null, "version_id" varchar(255) null, "rules" jsonb not null, "updated_at" timestamptz not null, constraint "library_rules_pkey" primary key ("id"));`);
    // At most one repository-wide row (version null) and one row per version.
    this.addSql(`create unique index "library_rules_scope_unique" on "library_rules" ("repository_id", coalesce("version_id", ''));`);
    this.addSql(`create table "library_document" ("id" varchar(255) not null, "repository_id" varchar(255) not null, "version_id" varchar(255) null, "file_path" text not null, "checksum" varchar(255) not null, "indexed_at" timestamptz not null, constraint "library_document_pkey" primary key ("id"));`);
    this.addSql(`create unique index "library_document_scope_path_unique" on "library_document" ("repository_id", coalesce("version_id", ''), "file_path");`);
    this.addSql(`create table "setting" ("key" varchar(255) not null, "value" jsonb not null, "updated_at" timestamptz not null, constraint "setting_pkey" primary key ("key"));`);
    this.addSql(`create table "snippet" ("id" varchar(255) not null, "document_id" varchar(255) not null, "repository_id" varchar(255) not null, "version_id" varchar(255) null, "type" varchar(255) not null, "title" text null, "content" text not null, "language" varchar(255) null, "breadcrumb" text null, "token_count" int not null, "ordinal" int not null, "created_at" timestamptz not null, constraint "snippet_pkey" primary key ("id"));`);
    this.addSql(`create index "snippet_repository_id_version_id_index" on "snippet" ("repository_id", "version_id");`);
    this.addSql(`create table "snippet_embedding" ("snippet_id" varchar(255) not null, "profile_id" varchar(255) not null, "repository_id" varchar(255) not null, "model" varchar(255) not null, "dimensions" int not null, "embedding" bytea not null, "created_at" timestamptz not null, constraint "snippet_embedding_pkey" primary key ("snippet_id", "profile_id"));`);
    this.addSql(`create index "snippet_embedding_repository_id_profile_id_index" on "snippet_embedding" ("repository_id", "profile_id");`);
    this.addSql(`create table "staged_document" ("job_id" varchar(255) not null, "file_path" text not null, "checksum" varchar(255) not null, "snippets" jsonb not null, constraint "staged_document_pkey" primary key ("job_id", "file_path"));`);

    // Deleting a library or a version removes everything under it; nothing is left orphaned.
    this.addSql(`alter table "library_version" add constraint "library_version_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "library_rules" add constraint "library_rules_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "library_rules" add constraint "library_rules_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "library_document" add constraint "library_document_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "library_document" add constraint "library_document_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet" add constraint "snippet_document_id_foreign" foreign key ("document_id") references "library_document" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet" add constraint "snippet_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet" add constraint "snippet_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet_embedding" add constraint "snippet_embedding_snippet_id_foreign" foreign key ("snippet_id") references "snippet" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet_embedding" add constraint "snippet_embedding_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "staged_document" add constraint "staged_document_job_id_foreign" foreign key ("job_id") references "job" ("id") on update cascade on delete cascade;`);
    // Indexing jobs are listed and cancelled per library.
    this.addSql(`create index "job_detail_repository_id_index" on "job" (("detail"->>'repositoryId')) where "kind" = 'index';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "job_detail_repository_id_index";`);
    for (const t of ['staged_document', 'snippet_embedding', 'snippet', 'library_document', 'library_rules', 'library_version', 'setting', 'library']) {
      this.addSql(`drop table if exists "${t}" cascade;`);
    }
  }
}
