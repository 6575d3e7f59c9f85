import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../../core/log.js';

/**
 * A library's page cache (in its `cacheDir`, which outlives runs): for each URL read, its validators (ETag,
 * Last-Modified) and what was made of it (the page's Markdown, its title and links). A refresh asks with the
 * validators (If-None-Match, If-Modified-Since), and a 304 reuses what was made without reading the page again.
 *
 * One file per URL, named by a hash of it and written atomically (a temporary file renamed), so a run killed midway
 * leaves whole entries. An entry that cannot be read (corrupt, another version's shape, another URL's) is a miss,
 * never an error. The cache is bounded: beyond `maxEntries` or `maxBytes`, the entries used least recently go.
 */
const Entry = z.object({
  url: z.string(),
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  title: z.string(),
  markdown: z.string(),
  links: z.array(z.string()),
});
export type CachedPage = z.infer<typeof Entry>;

export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

export const DEFAULT_CACHE_BOUNDS: CacheBounds = { maxEntries: 5000, maxBytes: 256 * 1024 * 1024 };

const FOLDER = 'site-pages';

export class PageCache {
  private constructor(
    private readonly dir: string | null,
    private readonly log: Logger,
    private readonly bounds: CacheBounds,
  ) {}

  /** The cache in `cacheDir`, or one that holds nothing when there is none (a lookup, a first read without a home). */
  static async open(cacheDir: string | undefined, log: Logger, bounds = DEFAULT_CACHE_BOUNDS): Promise<PageCache> {
    if (!cacheDir) return new PageCache(null, log, bounds);
    const dir = path.join(cacheDir, FOLDER);
    try {
      await fs.mkdir(dir, { recursive: true });
      return new PageCache(dir, log, bounds);
    } catch (err) {
      log.warn('site page cache unavailable; reading every page', { error: (err as Error).message });
      return new PageCache(null, log, bounds);
    }
  }

  private file(url: string): string | null {
    return this.dir && path.join(this.dir, `${createHash('sha256').update(url).digest('hex')}.json`);
  }

  async get(url: string): Promise<CachedPage | undefined> {
    const file = this.file(url);
    if (!file) return undefined;
    try {
      const entry = Entry.safeParse(JSON.parse(await fs.readFile(file, 'utf8')));
      if (!entry.success || entry.data.url !== url) return undefined;
      const now = new Date();
      await fs.utimes(file, now, now).catch(() => undefined); // its use, for the bound's least-recently-used order
      return entry.data;
    } catch {
      return undefined;
    }
  }

  /** Keeps what was made of `url` with its validators; a page with neither validator is not worth keeping. */
  async put(page: CachedPage): Promise<void> {
    const file = this.file(page.url);
    if (!file || (!page.etag && !page.lastModified)) return;
    const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await fs.writeFile(tmp, JSON.stringify(page));
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      this.log.warn('site page not cached', { url: page.url, error: (err as Error).message });
    }
  }

  /** Drops the least recently used entries beyond the bounds, and temporary files a killed run left. */
  async prune(): Promise<void> {
    if (!this.dir) return;
    try {
      const names = await fs.readdir(this.dir);
      const entries = [];
      for (const name of names) {
        const file = path.join(this.dir, name);
        const stat = await fs.stat(file).catch(() => null);
        if (!stat) continue;
        if (!name.endsWith('.json') && Date.now() - stat.mtimeMs > 3_600_000) await fs.rm(file, { force: true, recursive: true });
        else if (name.endsWith('.json')) entries.push({ file, size: stat.size, used: stat.mtimeMs });
      }
      entries.sort((a, b) => b.used - a.used);
      let bytes = 0;
      for (const [i, e] of entries.entries()) {
        bytes += e.size;
        if (i >= this.bounds.maxEntries || bytes > this.bounds.maxBytes) await fs.rm(e.file, { force: true });
      }
    } catch (err) {
      this.log.warn('site page cache not pruned', { error: (err as Error).message });
    }
  }
}
