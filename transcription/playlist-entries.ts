/**
 * A playlist as `yt-dlp --flat-playlist -J` describes it, turned into the entries that become jobs and those left
 * out (docs/transcription.md, "Playlists"). Pure: unit-tested with the shapes yt-dlp prints for YouTube playlists
 * and channels and for podcast feeds (its generic extractor's RSS).
 */
import { PermanentError } from '../core/errors.js';
import type { SkippedEntry } from './entities.js';

export interface PlaylistEntry {
  index: number;
  url: string;
  title: string | null;
  /** Seconds, when the listing says. */
  duration: number | null;
}

export interface PlaylistListing {
  title: string | null;
  /** All entries the playlist has, when the listing says (`playlist_count`), else those listed. */
  entryCount: number;
  entries: PlaylistEntry[];
  skipped: SkippedEntry[];
}

/** What YouTube's listings call entries nobody may watch (yt-dlp keeps them with these titles). */
const UNAVAILABLE_TITLE = /^\[(private|deleted|unavailable|removed) video\]$/i;
/** yt-dlp's `availability` values that need an account this server does not have. */
const UNAVAILABLE = new Set(['private', 'premium_only', 'subscriber_only', 'needs_auth']);

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** An entry's page: its `url` (or `webpage_url`) when it is http(s); YouTube's flat entries may give only an id. */
function entryUrl(e: Record<string, unknown>): string | null {
  for (const key of ['url', 'webpage_url', 'original_url']) {
    const v = str(e[key]);
    if (v && /^https?:\/\//i.test(v)) return v;
  }
  const id = str(e.id);
  if (id && (e.ie_key === 'Youtube' || e.ie === 'Youtube') && /^[\w-]{11}$/.test(id)) return `https://www.youtube.com/watch?v=${id}`;
  return null;
}

/**
 * Reads yt-dlp's JSON. Not a playlist (a single video): NOT_A_PLAYLIST; no entries: EMPTY_PLAYLIST (both permanent
 * errors with the code first, as the bounds' are). Entries over `maxDurationSeconds` (when the listing gives a
 * duration), unavailable ones and those past `maxEntries` are skipped with a reason; a nested playlist (a channel's
 * tabs) is read entry by entry.
 */
export function readPlaylist(json: unknown, o: { maxEntries: number; maxDurationSeconds: number }): PlaylistListing {
  const root = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  if (root._type !== 'playlist' && !Array.isArray(root.entries)) {
    throw new PermanentError('NOT_A_PLAYLIST: the URL is a single video, not a playlist or channel; create a job for it with POST /api/jobs');
  }
  const flat: Record<string, unknown>[] = [];
  const walk = (entries: unknown) => {
    if (!Array.isArray(entries)) return;
    for (const e of entries) {
      if (e && typeof e === 'object' && Array.isArray((e as Record<string, unknown>).entries)) walk((e as Record<string, unknown>).entries);
      else flat.push((e && typeof e === 'object' ? e : {}) as Record<string, unknown>);
    }
  };
  walk(root.entries);
  if (!flat.length) throw new PermanentError('EMPTY_PLAYLIST: the playlist has no entries (or none this server can see)');

  const entries: PlaylistEntry[] = [];
  const skipped: SkippedEntry[] = [];
  const seen = new Set<string>();
  flat.forEach((e, index) => {
    const url = entryUrl(e);
    const title = str(e.title);
    const duration = typeof e.duration === 'number' && Number.isFinite(e.duration) ? e.duration : null;
    const skip = (code: string, reason: string) => skipped.push({ index, url, title, code, reason });
    const availability = str(e.availability);
    if ((title && UNAVAILABLE_TITLE.test(title)) || (availability && UNAVAILABLE.has(availability))) {
      return skip('UNAVAILABLE', `the entry is ${availability ?? title?.slice(1, -1).toLowerCase()}`);
    }
    if (!url) return skip('NO_URL', 'the listing gives no address for the entry');
    // A flat listing of a channel's home page lists its tabs (Videos, Shorts, Live) as links to more playlists.
    if (e.ie_key === 'YoutubeTab' || e._type === 'playlist') {
      return skip('NESTED_PLAYLIST', 'the entry is a playlist itself (a channel\'s tab): ask for it by its own URL');
    }
    if (seen.has(url)) return skip('DUPLICATE', 'the same entry is listed earlier in the playlist');
    seen.add(url);
    if (duration !== null && duration > o.maxDurationSeconds) {
      return skip('MEDIA_TOO_LONG', `the entry is ${Math.round(duration)} s long, over TRANSCRIPTION_MAX_DURATION_SECONDS (${o.maxDurationSeconds})`);
    }
    if (entries.length >= o.maxEntries) {
      return skip('OVER_MAX_ENTRIES', `the playlist has more entries than TRANSCRIPTION_PLAYLIST_MAX_ENTRIES (${o.maxEntries})`);
    }
    entries.push({ index, url, title, duration });
  });
  const count = typeof root.playlist_count === 'number' ? Math.max(root.playlist_count, flat.length) : flat.length;
  return { title: str(root.title), entryCount: count, entries, skipped };
}
