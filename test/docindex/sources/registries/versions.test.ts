import { describe, expect, it } from 'vitest';
import type { PackageVersion } from '../../../../docindex/sources/types.js';
import { comparePep440, latestVersion, PEP440_SCHEME, SEMVER } from '../../../../docindex/sources/registries/versions.js';

/** Version order and the latest version (docindex/sources/registries/versions.ts): PEP 440 for PyPI, semver for the others. */
const v = (version: string, yanked = false): PackageVersion => ({ version, yanked, publishedAt: null, archive: null, repository: null });

describe('PEP 440', () => {
  it('orders releases as pip does', () => {
    // packaging's own example order, plus spellings it normalises
    const ordered = ['1.0.dev456', '1.0a1', '1.0a2.dev456', '1.0a12.dev456', '1.0a12', '1.0b1.dev456', '1.0b2', '1.0b2.post345.dev456', '1.0b2.post345', '1.0rc1.dev456', '1.0rc1', '1.0', '1.0+abc.5', '1.0.post456.dev34', '1.0.post456', '1.0.15', '1.1.dev1', '1!0.1'];
    const shuffled = [...ordered].reverse();
    expect(shuffled.sort(comparePep440).filter((x) => x !== '1.0+abc.5')).toEqual(ordered.filter((x) => x !== '1.0+abc.5'));
    expect(comparePep440('1.0', '1.0.0')).toBe(0);
    expect(comparePep440('1.0-1', '1.0.post1')).toBe(0);
    expect(comparePep440('1.0alpha1', '1.0a1')).toBe(0);
    expect(comparePep440('1.0c1', '1.0rc1')).toBe(0);
    expect(comparePep440('1.10', '1.9')).toBe(1);
    expect(comparePep440('not a version', '0.0.1')).toBe(-1);
  });

  it('pre-releases and dev releases are not the latest; yanked ones are not either', () => {
    expect(latestVersion([v('1.0'), v('1.1rc1'), v('1.2.dev3'), v('1.0.post1')], PEP440_SCHEME)).toBe('1.0.post1');
    expect(latestVersion([v('1.0'), v('1.1', true)], PEP440_SCHEME)).toBe('1.0');
    expect(latestVersion([v('0.1a1'), v('0.1a2')], PEP440_SCHEME)).toBe('0.1a2');
    expect(latestVersion([v('1.0', true)], PEP440_SCHEME)).toBe('1.0');
    expect(latestVersion([], PEP440_SCHEME)).toBeNull();
  });
});

describe('semver', () => {
  it('orders by semver and skips pre-releases and yanked versions for the latest', () => {
    expect(['1.10.0', '1.2.0', '1.2.0-rc.1', 'junk'].sort(SEMVER.compare)).toEqual(['junk', '1.2.0-rc.1', '1.2.0', '1.10.0']);
    expect(latestVersion([v('1.2.0'), v('1.10.0', true), v('2.0.0-beta.1')], SEMVER)).toBe('1.2.0');
  });
});
