import { describe, expect, it } from 'vitest';
import { entryJobId } from '../../transcription/playlist-activities.js';
import { readPlaylist } from '../../transcription/playlist-entries.js';

const bounds = { maxEntries: 3, maxDurationSeconds: 600 };
/** What `yt-dlp --flat-playlist -J` prints for a YouTube playlist (entries trimmed to the fields read). */
const youtube = {
  _type: 'playlist',
  id: 'PL123',
  title: 'Talks',
  playlist_count: 7,
  entries: [
    { _type: 'url', ie_key: 'Youtube', id: 'aaaaaaaaaaa', url: 'https://www.youtube.com/watch?v=aaaaaaaaaaa', title: 'One', duration: 120 },
    { _type: 'url', ie_key: 'Youtube', id: 'bbbbbbbbbbb', url: 'https://www.youtube.com/watch?v=bbbbbbbbbbb', title: '[Private video]', duration: null },
    { _type: 'url', ie_key: 'Youtube', id: 'ccccccccccc', url: 'https://www.youtube.com/watch?v=ccccccccccc', title: '[Deleted video]', duration: null },
    { _type: 'url', ie_key: 'Youtube', id: 'ddddddddddd', url: 'https://www.youtube.com/watch?v=ddddddddddd', title: 'Members', availability: 'subscriber_only' },
    { _type: 'url', ie_key: 'Youtube', id: 'eeeeeeeeeee', url: 'https://www.youtube.com/watch?v=eeeeeeeeeee', title: 'Long', duration: 7200 },
    { _type: 'url', ie_key: 'Youtube', id: 'fffffffffff', title: 'Id only', duration: 30 },
    { _type: 'url', ie_key: 'Youtube', id: 'aaaaaaaaaaa', url: 'https://www.youtube.com/watch?v=aaaaaaaaaaa', title: 'One again', duration: 120 },
    { _type: 'url', ie_key: 'Youtube', id: 'ggggggggggg', url: 'https://www.youtube.com/watch?v=ggggggggggg', title: 'Two', duration: 60 },
    { _type: 'url', ie_key: 'Youtube', id: 'hhhhhhhhhhh', url: 'https://www.youtube.com/watch?v=hhhhhhhhhhh', title: 'Over the bound', duration: 60 },
  ],
};

describe('a flat playlist listing', () => {
  it('becomes entries, with private, removed, members-only, too long, repeated and surplus entries skipped with a code', () => {
    const listing = readPlaylist(youtube, bounds);
    expect(listing.title).toBe('Talks');
    expect(listing.entryCount).toBe(9);
    expect(listing.entries.map((e) => [e.index, e.title, e.url.slice(-11)])).toEqual([
      [0, 'One', 'aaaaaaaaaaa'],
      [5, 'Id only', 'fffffffffff'],
      [7, 'Two', 'ggggggggggg'],
    ]);
    expect(listing.skipped.map((s) => [s.index, s.code])).toEqual([
      [1, 'UNAVAILABLE'],
      [2, 'UNAVAILABLE'],
      [3, 'UNAVAILABLE'],
      [4, 'MEDIA_TOO_LONG'],
      [6, 'DUPLICATE'],
      [8, 'OVER_MAX_ENTRIES'],
    ]);
    expect(listing.skipped[3]!.reason).toMatch(/7200 s long, over TRANSCRIPTION_MAX_DURATION_SECONDS \(600\)/);
    expect(listing.skipped[0]!.reason).toBe('the entry is private video');
  });

  it("reads a channel's tabs entry by entry", () => {
    const channel = { _type: 'playlist', title: 'Chan', entries: [{ _type: 'playlist', title: 'Videos', entries: [{ url: 'https://v.example/1', title: 'a' }] }, { _type: 'playlist', title: 'Shorts', entries: [{ url: 'https://v.example/2', title: 'b' }] }] };
    expect(readPlaylist(channel, bounds).entries.map((e) => e.url)).toEqual(['https://v.example/1', 'https://v.example/2']);
    // Flat, a channel's home page lists its tabs as links to more playlists: reported, not made jobs of.
    const tabs = { _type: 'playlist', title: 'Chan', entries: [{ _type: 'url', ie_key: 'YoutubeTab', url: 'https://www.youtube.com/@chan/videos', title: 'Chan - Videos' }] };
    expect(() => readPlaylist(tabs, bounds)).not.toThrow();
    expect(readPlaylist(tabs, bounds)).toMatchObject({ entries: [], skipped: [{ code: 'NESTED_PLAYLIST', url: 'https://www.youtube.com/@chan/videos' }] });
  });

  it('refuses an empty playlist and a single video with stable codes', () => {
    expect(() => readPlaylist({ _type: 'playlist', entries: [] }, bounds)).toThrow(/^EMPTY_PLAYLIST: /);
    expect(() => readPlaylist({ id: 'x', title: 'One video', formats: [] }, bounds)).toThrow(/^NOT_A_PLAYLIST: /);
  });

  it("gives each entry a job id of its own that every attempt derives alike", () => {
    const group = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
    expect(entryJobId(group, 0)).toBe(entryJobId(group, 0));
    expect(entryJobId(group, 0)).not.toBe(entryJobId(group, 1));
    expect(entryJobId(group, 3)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
