/**
 * What the source splitter (../source.ts) needs to know about a file, found either from a tree-sitter syntax tree
 * (tree-outline.ts) or, for languages without a grammar or when a parse fails, by the line lexer (line-outline.ts).
 * All line numbers are 0-based indexes into the file's lines.
 */
export interface Declaration {
  /** The line of the declaration itself (`class Foo`, `def bar`), below its comments and decorators. */
  line: number;
  /** Its first line: the comments, doc comments, decorators, annotations and attributes directly above it included. */
  start: number;
  /** `class Foo`, `function bar`, `impl Display for Point`, `func Server.Serve`. */
  title: string;
  /** Lines inside it where an oversized snippet may be split: its member or statement starts, comments included. */
  members: number[];
}

export interface Outline {
  /** Top-level declarations in file order. */
  decls: Declaration[];
  /** Per line, 1 where it belongs to an import, package or use statement (never a meaningful preamble). */
  importish: Uint8Array;
  /** Per line, 1 where it holds a comment and no code (a license header is such a block). */
  comment: Uint8Array;
}
