import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Job } from './job.js';
import { Library, LibraryVersion } from './library.js';

/**
 * One indexed file of a library at its default branch (versionId null) or at a version. The checksum lets a
 * re-index skip files that did not change.
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
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    versionId: () => p.manyToOne(LibraryVersion).mapToPk().joinColumn('version_id').deleteRule('cascade').nullable(),
    type: p.string().$type<SnippetType>(),
    title: p.text().nullable(),
    content: p.text(),
    language: p.string().nullable(),
    breadcrumb: p.text().nullable(),
    tokenCount: p.integer(),
    ordinal: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
  indexes: [{ name: 'snippet_repository_id_version_id_index', properties: ['repositoryId', 'versionId'] }],
});
export type Snippet = InferEntity<typeof Snippet>;

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
