import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** Repositories (`git-host`, `local`), packages of a registry (`npm`, `pypi`, `crates`) and documentation sites. */
export const LIBRARY_SOURCES = ['git-host', 'local', 'npm', 'pypi', 'crates', 'website'] as const;
export type LibrarySource = (typeof LIBRARY_SOURCES)[number];
export const LIBRARY_STATES = ['pending', 'indexing', 'indexed', 'error'] as const;
export type LibraryState = (typeof LIBRARY_STATES)[number];

/**
 * A registered library: a repository (id `/<owner>/<repo>`), a package (`/npm/<name>`, `/npm/@scope/name`,
 * `/pypi/<name>`, `/crates/<name>`) or a documentation site (`/websites/<host and path>`). `sourceUrl` is the
 * repository's URL or folder, the package's name, or the site's start URL.
 */
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
    /**
     * When what search reads of the default scope (snippets, documents, vectors) last changed: the key of each API
     * process's caches of it (docindex/search/search.ts, `scopeStampOf`). A re-index that changed nothing leaves it.
     */
    searchStamp: p.datetime().nullable(),
    /** The commit the default branch was last indexed at (a package: the version; a site: when it was read). */
    lastCommit: p.string().nullable(),
    /** A package's repository as its registry records it, when there is one: its versions are read from there. */
    repositoryUrl: p.text().nullable(),
    /** A package's version the default scope holds: the registry's latest when it was last indexed. */
    latestVersion: p.string().nullable(),
    /** How often its refresh schedule runs (`6h`, `1d`); null: the INDEX_REFRESH_EVERY default; `off`: never. */
    refreshEvery: p.string().nullable(),
    /** Which new versions a refresh registers (docindex/refresh/policy.ts); null: the INDEX_VERSION_POLICY default. */
    versionPolicy: p.string().nullable(),
    /** Registered by a search that found nothing (on demand), not by a person. */
    onDemand: p.boolean().default(false),
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
    /** As the library's `searchStamp`, for this version. */
    searchStamp: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
  uniques: [{ name: 'library_version_repository_id_tag_unique', properties: ['repositoryId', 'tag'] }],
});
export type LibraryVersion = InferEntity<typeof LibraryVersion>;
