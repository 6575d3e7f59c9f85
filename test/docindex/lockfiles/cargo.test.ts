import { describe, expect, it } from 'vitest';
import { parseLockfile } from '../../../docindex/lockfiles/index.js';
import { lines, parseFixture } from './helpers.js';

const NO_DEV_SPLIT = 'Cargo.lock does not tell dev-dependencies apart: send Cargo.toml with it to split them';

describe('Cargo.lock', () => {
  it('v1: the root crate (no source) lists `name version (source)`; transitive crates are left out', () => {
    const result = parseFixture('Cargo.lock', 'Cargo-v1.lock');
    expect(result.ecosystem).toBe('crates');
    expect(lines(result)).toEqual(['log@0.4.8', 'serde@1.0.104']);
    expect(result.warnings).toEqual([NO_DEV_SPLIT]);
  });

  it('v3 workspace: each member is a root, members depending on each other are not registry crates, `name version` picks among versions', () => {
    const result = parseFixture('Cargo.lock', 'Cargo-v3.lock');
    expect(lines(result)).toEqual(['bitflags@1.3.2', 'bitflags@2.5.0', 'insta@1.39.0', 'serde@1.0.203', 'tokio@1.38.0']);
    expect(result.warnings).toEqual([NO_DEV_SPLIT, 'tracing: comes from git or a local folder, not a registry: skipped']);
  });

  it('v4 alone, then with Cargo.toml for the dev split and ranges', () => {
    expect(lines(parseFixture('Cargo.lock', 'Cargo-v4.lock'))).toEqual(['anyhow@1.0.86', 'serde@1.0.203', 'tempfile@3.10.1']);
    const result = parseFixture('Cargo.lock', 'Cargo-v4.lock', 'Cargo-manifest.toml');
    expect(lines(result)).toEqual(['anyhow@1.0.86 (1.0)', 'serde@1.0.203 (=1.0.203)', 'dev tempfile@3.10.1 (3)']);
    expect(result.warnings).not.toContain(NO_DEV_SPLIT);
  });
});

describe('Cargo.toml', () => {
  it('all sections, per-target ones, renames and workspace inheritance; only `=x.y.z` is exact', () => {
    const result = parseFixture('Cargo.toml', 'Cargo-manifest.toml');
    expect(lines(result)).toEqual([
      'anyhow@- (1.0)',
      'cc@- (1.0.98)',
      'nix@- (0.29)',
      'serde@1.0.203 (=1.0.203)',
      // `json = { package = "serde_json" }`: the crate's own name.
      'serde_json@- (1)',
      'tokio@- (1.38)',
      'dev tempfile@- (3)',
    ]);
    expect(result.warnings).toEqual([
      'mill-core: comes from git or a local folder, not a registry: skipped',
      'tracing: comes from git or a local folder, not a registry: skipped',
    ]);
  });

  it('a malformed Cargo.toml says where', () => {
    expect(() => parseLockfile({ fileName: 'Cargo.toml', content: '[dependencies]\nserde = { version = "1"\n' })).toThrow(
      expect.objectContaining({ code: 'LOCKFILE_INVALID', message: expect.stringMatching(/^Cargo\.toml is not valid: .*line/i) }),
    );
  });
});
