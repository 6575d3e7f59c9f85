import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Job } from '../../db/entities/job.js';
import { Library, LibraryVersion } from './library.js';

/**
 * One indexed file of a library at its default branch (versionId null) or at a version. The checksum lets a
 * re-index skip files that did not change; the size and modification time (nanoseconds), when kept, let it skip
 * reading them (docindex/pipeline.ts, `readSelected`).
 */
export const LibraryDocument = defineEntity({
  name: 'LibraryDocument',
  tableName: 'library_document',
  properties: (p) => ({
    id: p.string().primary(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    versionId: () => p.manyToOne(LibraryVersion).mapToPk().joinColumn('version_id').deleteRule('cascade').nullable(),
    filePath: p.text(),
    checksum: p.string(),
    /** The file's size and mtime when it was read; null when not kept (then the file is always read). */
    size: p.bigint('string').nullable(),
    mtimeNs: p.bigint('string').nullable(),
    indexedAt: p.datetime(),
  }),
  uniques: [
    {
      name: 'library_document_scope_path_unique',
      expression:
        'create unique index "library_document_scope_path_unique" on "library_document" ("repository_id", coalesce("version_id", \'\'), "file_path")',
    },
  ],
});
export type LibraryDocument = InferEntity<typeof LibraryDocument>;

export const SNIPPET_TYPES = ['code', 'info'] as const;
export type SnippetType = (typeof SNIPPET_TYPES)[number];

/** A documentation snippet: what search returns. Ids are derived from their content, so rewrites are stable. */
export const Snippet = defineEntity({
  name: 'Snippet',
  tableName: 'snippet',
  properties: (p) => ({
    id: p.string().primary(),
    documentId: () => p.manyToOne(LibraryDocument).mapToPk().joinColumn('document_id').deleteRule('cascade'),
    /**
     * Its document's scope, copied for the scope's index; no foreign keys (Migration20261215000000_snippet_scope_keys):
     * the document's key removes the snippet with its library or version.
     */
    repositoryId: p.string().fieldName('repository_id'),
    versionId: p.string().fieldName('version_id').nullable(),
    type: p.string().$type<SnippetType>(),
    title: p.text().nullable(),
    content: p.text(),
    language: p.string().nullable(),
    breadcrumb: p.text().nullable(),
    tokenCount: p.integer(),
    ordinal: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /**
     * Keyword search (docindex/search/keyword.ts): `snippet_search_vector(title, breadcrumb, content)`, never selected
     * or written by the ORM. A trigger fills it (Migration20261205000000_staged_search_vectors); the swap inserts it as staged.
     */
    searchVector: p.string().columnType('tsvector').nullable().lazy(true, false),
  }),
  indexes: [
    { name: 'snippet_repository_id_version_id_index', properties: ['repositoryId', 'versionId'] },
    { name: 'snippet_document_id_ordinal_index', properties: ['documentId', 'ordinal'] },
    { name: 'snippet_search_vector_index', expression: 'create index "snippet_search_vector_index" on "snippet" using gin ("search_vector")' },
  ],
});
export type Snippet = InferEntity<typeof Snippet>;

/**
 * How many snippets of a scope (a library's default branch, or one version) hold a lexeme of the keyword index, for
 * the lexemes at least MIN_TERM_SNIPPETS hold: keyword search reads a common word's matches differently from a rare
 * word's and weighs it by its rarity (docindex/search/keyword.ts). Rewritten with the snippets by each indexing run.
 */
export const SearchTerm = defineEntity({
  name: 'SearchTerm',
  tableName: 'search_term',
  properties: (p) => ({
    id: p.bigint().primary().autoincrement(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    versionId: () => p.manyToOne(LibraryVersion).mapToPk().joinColumn('version_id').deleteRule('cascade').nullable(),
    lexeme: p.text(),
    snippets: p.integer(),
  }),
  uniques: [
    {
      name: 'search_term_scope_lexeme_unique',
      expression: 'create unique index "search_term_scope_lexeme_unique" on "search_term" ("repository_id", coalesce("version_id", \'\'), "lexeme")',
    },
  ],
});
export type SearchTerm = InferEntity<typeof SearchTerm>;

/** A snippet's vector under one embedding profile, as float32 bytes (filled by the embed stage). */
export const SnippetEmbedding = defineEntity({
  name: 'SnippetEmbedding',
  tableName: 'snippet_embedding',
  properties: (p) => ({
    snippetId: () => p.manyToOne(Snippet).mapToPk().joinColumn('snippet_id').deleteRule('cascade').primary(),
    profileId: p.string().primary(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    model: p.string(),
    dimensions: p.integer(),
    embedding: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
  primaryKeys: ['snippetId', 'profileId'],
  indexes: [{ name: 'snippet_embedding_repository_id_profile_id_index', properties: ['repositoryId', 'profileId'] }],
});
export type SnippetEmbedding = InferEntity<typeof SnippetEmbedding>;

/** Rules from the config file: one repository-wide row (versionId null) and at most one row per version. */
export const LibraryRules = defineEntity({
  name: 'LibraryRules',
  tableName: 'library_rules',
  properties: (p) => ({
    id: p.string().primary(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    versionId: () => p.manyToOne(LibraryVersion).mapToPk().joinColumn('version_id').deleteRule('cascade').nullable(),
    rules: p.json<string[]>(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
  uniques: [
    {
      name: 'library_rules_scope_unique',
      expression:
        'create unique index "library_rules_scope_unique" on "library_rules" ("repository_id", coalesce("version_id", \'\'))',
    },
  ],
});
export type LibraryRules = InferEntity<typeof LibraryRules>;

/**
 * Files parsed by an indexing job, waiting for the one transaction that swaps them in. Parsing happens outside
 * that transaction (it is slow); a retried parse rewrites its own rows.
 */
export const StagedDocument = defineEntity({
  name: 'StagedDocument',
  tableName: 'staged_document',
  properties: (p) => ({
    jobId: () => p.manyToOne(Job).mapToPk().joinColumn('job_id').deleteRule('cascade').primary(),
    filePath: p.text().primary(),
    checksum: p.string(),
    snippets: p.json<unknown[]>(),
    /** The file's stat as read, for its document (null: not kept). */
    size: p.bigint('string').nullable(),
    mtimeNs: p.bigint('string').nullable(),
    /** Content unchanged, only the stat: the swap updates the stored document's stat and keeps its snippets. */
    statOnly: p.boolean().default(false),
    /** Each staged snippet's `search_vector`, in order, computed while the crawl goes on; null until then. */
    vectors: p.string().columnType('tsvector[]').nullable().lazy(true, false),
    /** Each staged snippet's content part of `search_vector` (docindex/content-vectors.ts), in order; null where PostgreSQL computes it. */
    contentVectors: p.string().columnType('tsvector[]').nullable().lazy(true, false),
  }),
  primaryKeys: ['jobId', 'filePath'],
});
export type StagedDocument = InferEntity<typeof StagedDocument>;

/** Key-value settings, e.g. `indexing.concurrency`; the value is JSON. */
export const Setting = defineEntity({
  name: 'Setting',
  tableName: 'setting',
  properties: (p) => ({
    key: p.string().primary(),
    value: p.json<unknown>(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type Setting = InferEntity<typeof Setting>;
