import { describe, expect, it } from 'vitest';
import { parseServerTiming, timed, timedSync, Timings } from '../../../docindex/search/timings.js';

describe('Timings', () => {
  it('adds up a phase run twice, keeps first-run order, and reads back what it wrote', async () => {
    const t = new Timings();
    await timed(t, 'keyword', () => new Promise((r) => setTimeout(r, 5)));
    timedSync(t, 'fuse', () => 1);
    t.add('keyword', 10);
    expect(t.header()).toMatch(/^keyword;dur=\d+\.\d, fuse;dur=\d+\.\d$/);
    const back = parseServerTiming(t.header());
    expect([...back.keys()]).toEqual(['keyword', 'fuse']);
    expect(back.get('keyword')).toBeGreaterThanOrEqual(14);
  });

  it('times a failing phase too, and passes its error on', async () => {
    const t = new Timings();
    await expect(timed(t, 'load', () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    expect(() => timedSync(t, 'budget', () => { throw new Error('bad'); })).toThrow('bad');
    expect(t.entries().map(([name]) => name)).toEqual(['load', 'budget']);
  });

  it('runs the work alone without a Timings, and reads only entries with a duration', async () => {
    expect(await timed(undefined, 'x', async () => 7)).toBe(7);
    expect(timedSync(undefined, 'x', () => 8)).toBe(8);
    expect([...parseServerTiming('cache;desc="hit", db;dur=53, app;dur=47.2')]).toEqual([['db', 53], ['app', 47.2]]);
    expect(parseServerTiming(null).size).toBe(0);
  });
});
