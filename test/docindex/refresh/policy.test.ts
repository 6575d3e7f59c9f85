import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { parseRefreshEvery } from '../../../docindex/refresh/every.js';
import { type AvailableVersion, parsePolicy, pickVersions, semverOf } from '../../../docindex/refresh/policy.js';

const versions = (...names: string[]): AvailableVersion[] => names.map((version) => ({ version, yanked: false, publishedAt: null }));
const pick = (policy: string, available: AvailableVersion[]) => pickVersions(parsePolicy(policy), available);

function rejects(text: string, why: RegExp) {
  let error: unknown;
  try {
    parsePolicy(text);
  } catch (err) {
    error = err;
  }
  expect(error, text).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).code).toBe('INVALID_VERSION_POLICY');
  expect((error as ValidationError).message).toMatch(why);
}

const TAGS = versions('v1.0.0', 'v1.0.1', 'v1.1.0', 'v1.1.3', 'v1.1.2', 'v1.2.0', 'v2.0.0', 'v2.0.1', 'v2.1.0-rc.1', 'v3.0.0-beta.2', 'nightly', 'v0.9.0');

describe('parsePolicy', () => {
  it('reads the terms a person types, with spaces and commas', () => {
    expect(parsePolicy(' minors:3 , latest ').text).toBe('minors:3,latest');
    expect(parsePolicy('none')).toEqual({ terms: [], text: 'none' });
    expect(parsePolicy('majors:2').terms).toEqual([{ kind: 'majors', count: 2 }]);
    expect(parsePolicy('match:v2.*,latest').terms.map((t) => t.kind)).toEqual(['match', 'latest']);
  });

  it('keeps a comma inside a /regex/', () => {
    const policy = parsePolicy('match:/^v\\d{1,2}\\.0\\.0$/,latest');
    expect(policy.terms).toHaveLength(2);
    expect(pickVersions(policy, versions('v1.0.0', 'v12.0.0', 'v123.0.0', 'v1.5.0'))).toEqual(['v123.0.0', 'v12.0.0', 'v1.0.0']);
  });

  it('refuses what it cannot read, saying why', () => {
    rejects('', /empty/);
    rejects('latest,', /empty/);
    rejects('minors', /not a term/);
    rejects('minors:0', /1 to 50/);
    rejects('majors:500', /1 to 50/);
    rejects('none,latest', /alone/);
    rejects('match:', /needs a pattern/);
    rejects('match:/(/', /Invalid regular expression/);
    rejects(`match:${'a'.repeat(300)}`, /at most 200/);
    rejects('newest', /not a term/);
  });
});

describe('pickVersions', () => {
  it('latest: the newest release, never a pre-release', () => {
    expect(pick('latest', TAGS)).toEqual(['v2.0.1']);
  });

  it('minors:N: the newest patch of each of the last N minor lines', () => {
    expect(pick('minors:3', TAGS)).toEqual(['v2.0.1', 'v1.2.0', 'v1.1.3']);
  });

  it('majors:N: the newest release of each of the last N majors', () => {
    expect(pick('majors:2', TAGS)).toEqual(['v2.0.1', 'v1.2.0']);
    expect(pick('majors:9', TAGS)).toEqual(['v2.0.1', 'v1.2.0', 'v0.9.0']);
  });

  it('match: globs and regexes pick tags, pre-releases and other names included', () => {
    expect(pick('match:v2.*', TAGS)).toEqual(['v2.1.0-rc.1', 'v2.0.1', 'v2.0.0']);
    expect(pick('match:/^nightly$/', TAGS)).toEqual(['nightly']);
    expect(pick('match:/^V3/i', TAGS)).toEqual(['v3.0.0-beta.2']);
    // A glob's dots are dots, not "any character".
    expect(pick('match:v1.1.?', versions('v1.1.3', 'v1x1x3'))).toEqual(['v1.1.3']);
  });

  it('none picks nothing; terms combine without repeating a version', () => {
    expect(pick('none', TAGS)).toEqual([]);
    expect(pick('latest,majors:1,match:v2.0.*', TAGS)).toEqual(['v2.0.1', 'v2.0.0']);
  });

  it('never picks a yanked version unless a match: names it', () => {
    const available = [...versions('1.0.0', '1.1.0'), { version: '1.2.0', yanked: true, publishedAt: null }];
    expect(pick('latest', available)).toEqual(['1.1.0']);
    expect(pick('minors:5', available)).toEqual(['1.1.0', '1.0.0']);
    expect(pick('match:1.2.*', available)).toEqual(['1.2.0']);
  });

  it('reads package versions and short tags: `1.2` is 1.2.0, PEP 440 pre-releases are not releases', () => {
    expect(semverOf('v1.2')?.version).toBe('1.2.0');
    expect(semverOf('2.0.0rc1')).toBeNull();
    expect(pick('latest', versions('1.9', '2.0.0rc1', '1.10'))).toEqual(['1.10']);
  });

  it('orders what semver cannot read by publication, and skips absurdly long tags', () => {
    const available = [
      { version: 'build-a', yanked: false, publishedAt: '2026-01-01T00:00:00Z' },
      { version: 'build-b', yanked: false, publishedAt: '2026-03-01T00:00:00Z' },
      { version: `build-${'x'.repeat(200)}`, yanked: false, publishedAt: null },
    ];
    expect(pick('match:build-*', available)).toEqual(['build-b', 'build-a']);
  });

  it('has nothing to pick from nothing', () => {
    expect(pick('minors:3,latest', [])).toEqual([]);
  });
});

describe('parseRefreshEvery', () => {
  it('reads off and durations, within a minute and a year', () => {
    expect(parseRefreshEvery('off')).toBe('off');
    expect(parseRefreshEvery('OFF')).toBe('off');
    expect(parseRefreshEvery('6h')).toBe(6 * 3_600_000);
    expect(parseRefreshEvery('1d')).toBe(86_400_000);
    expect(parseRefreshEvery('2 weeks')).toBe(14 * 86_400_000);
    for (const bad of ['', 'soon', '5s', '3000', '2y']) expect(() => parseRefreshEvery(bad), bad).toThrow(ValidationError);
  });
});
