import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const LIBRARY_SOURCES = ['git-host', 'local'] as const;
export type LibrarySource = (typeof LIBRARY_SOURCES)[number];
export const LIBRARY_STATES = ['pending', 'indexing', 'indexed', 'error'] as const;
export type LibraryState = (typeof LIBRARY_STATES)[number];

/** A registered repository: the spec calls it a library; its id is `/<owner>/<repo>`. */
export const Library = defineEntity({
  name: 'Library',
  tableName: 'library',
  properties: (p) => ({
    id: p.string().primary(),
    title: p.string(),
    description: p.text().nullable(),
    source: p.string().$type<LibrarySource>(),
    sourceUrl: p.text(),
    branch: p.string().nullable(),
    /**
     * Read access to a private remote, sealed (core/secrets.ts, context `gitHostTokenContext`); opened only to run
     * git (docindex/service.ts `remoteAccess`). Serializers never include it.
     */
    gitHostToken: p.text().nullable(),
    state: p.string().$type<LibraryState>().default('pending'),
    totalSnippets: p.integer().default(0),
    trustScore: p.double().default(0),
    lastIndexedAt: p.datetime().nullable(),
    /** The commit the default branch was last indexed at. */
    lastCommit: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type Library = InferEntity<typeof Library>;

/** What a library's sealed token belongs to: it opens for this library only. */
export const gitHostTokenContext = (libraryId: string) => `library:${libraryId}:gitHostToken`;

export const VERSION_STATES = ['pending', 'indexing', 'indexed', 'error'] as const;
export type VersionState = (typeof VERSION_STATES)[number];

/** A tag of a library, indexed separately from the default branch; id `/<owner>/<repo>/<tag>`. */
export const LibraryVersion = defineEntity({
  name: 'LibraryVersion',
  tableName: 'library_version',
  properties: (p) => ({
    id: p.string().primary(),
    repositoryId: () => p.manyToOne(Library).mapToPk().joinColumn('repository_id').deleteRule('cascade'),
    tag: p.string(),
    title: p.string().nullable(),
    commitHash: p.string().nullable(),
    state: p.string().$type<VersionState>().default('pending'),
    totalSnippets: p.integer().default(0),
    indexedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
  uniques: [{ name: 'library_version_repository_id_tag_unique', properties: ['repositoryId', 'tag'] }],
});
export type LibraryVersion = InferEntity<typeof LibraryVersion>;
