import { describe, expect, it } from 'vitest';
import { splitRustModuleDocs } from '../../../docindex/parse/doc-comments.js';
import { parseFile } from '../../../docindex/parse/parse.js';

const TUTORIAL = [
  '// Contributing: keep examples in sync.',
  '',
  '//! ## Tutorial',
  '//!',
  '//! ### Flags',
  '//!',
  '//! Flags can also be switches that can be on/off, and a flag can be counted with `ArgAction::Count`.',
  '//!',
  '//! ```rust',
  '#![doc = include_str!("../examples/flags.rs")]',
  '//! ```',
  '//!',
  '//! ### Required arguments',
  '//!',
  '//! By default an argument is optional; `Arg::required` makes the user pass it or get an error.',
  '//! ```rust',
  '//! let cmd = Command::new("app").arg(Arg::new("name").required(true));',
  '//! ```',
  '',
  'pub mod chapter_1 {}',
].join('\n');

describe("Rust modules' inner doc comments", () => {
  it('are split off as Markdown, line for line, without the included files or their empty fences', () => {
    const docs = splitRustModuleDocs(TUTORIAL)!;
    const md = docs.markdown.split('\n');
    expect(md).toHaveLength(TUTORIAL.split('\n').length);
    expect(md[4]).toBe('### Flags');
    expect(docs.markdown).not.toContain('include_str');
    expect(md[8]).toBe(''); // "```rust" around an include_str! only
    expect(md[15]).toBe('```rust'); // a fence with code stays
    expect(docs.code).not.toContain('//!');
    expect(docs.code).toContain('pub mod chapter_1');
    expect(splitRustModuleDocs('/// an outer doc comment\nfn f() {}')).toBeNull();
  });

  it('are indexed as sections by heading, with the code kept as code', () => {
    const snippets = parseFile('src/_tutorial.rs', TUTORIAL);
    const info = snippets.filter((s) => s.type === 'info');
    expect(info.map((s) => s.breadcrumb)).toEqual(['Tutorial > Flags', 'Tutorial > Required arguments']);
    expect(info[0]!.content).toContain('counted with `ArgAction::Count`');
    expect(info[0]!.content).not.toContain('```');
    expect(snippets.some((s) => s.type === 'code' && s.content.includes('required(true)'))).toBe(true);
    expect(snippets.every((s) => !s.content.includes('//!'))).toBe(true);
  });
});
