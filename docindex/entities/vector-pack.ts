import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Library, LibraryVersion } from './library.js';

/**
 * A scope's vectors under one embedding profile, packed for a fast load (docindex/search/vector-pack.ts): rows in
 * snippet id order, split into chunks of consecutive rows. Each chunk holds its rows' snippet ids (newline-separated),
 * their page numbers (int32, little-endian) and their float32 vectors, and the fingerprint of the scope's vector rows
 * it was built from: a pack whose fingerprint is not the scope's current one is never read. Written by the embed
 * stage, SQL only (never through the ORM).
 */
export const VectorPack = defineEntity({
  name: 'VectorPack',
  tableName: 'vector_pack',
  properties: (p) => ({
    /** `<repository>@<version or ''>#<profile>#<chunk>`. */
    id: p.string().primary(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    versionId: () => p.manyToOne(LibraryVersion).mapToPk().joinColumn('version_id').deleteRule('cascade').nullable(),
    profileId: p.string(),
    chunk: p.integer(),
    chunks: p.integer(),
    dimensions: p.integer(),
    fingerprint: p.text(),
    ids: p.text(),
    pages: p.blob(),
    vectors: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
  indexes: [
    {
      name: 'vector_pack_scope_index',
      expression: 'create index "vector_pack_scope_index" on "vector_pack" ("repository_id", coalesce("version_id", \'\'), "profile_id")',
    },
  ],
});
export type VectorPack = InferEntity<typeof VectorPack>;
