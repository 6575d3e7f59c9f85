import { assemble, resolveOptions, type ParseOptions, type ParsedSnippet, type RawSnippet } from './assemble.js';
import { loadGrammars } from './code/grammar.js';
import { splitRustModuleDocs } from './doc-comments.js';
import { detectKind, sourceLanguage, type DocKind } from './languages.js';
import { parseMarkdown } from './markdown.js';
import { parseNotebook } from './notebook.js';
import { parseRst } from './rst.js';
import { parseSource } from './source.js';
import { baseName, extension, normalizeNewlines } from './util.js';

/**
 * The documentation parser: one file in, its snippets out. Pure, deterministic and total: the same input always
 * gives the same output, and no input makes it throw (if a format parser ever failed, the file would be indexed as
 * plain text instead, and if even that failed, as nothing). Source files in the languages with a tree-sitter grammar
 * are split by their syntax tree once `loadSourceGrammars` has loaded it, and by a line lexer before.
 */
export type { ParseOptions, ParsedSnippet, SnippetType } from './assemble.js';
export type { DocKind } from './languages.js';
export { detectKind } from './languages.js';
export { countTokens, TOKENIZER_ENCODING } from './tokens.js';

export function parseFile(filePath: string, content: string, options?: ParseOptions): ParsedSnippet[] {
  try {
    const opts = resolveOptions(options);
    if (typeof content !== 'string' || typeof filePath !== 'string') return [];
    const kind = detectKind(filePath);
    if (kind === null) return [];
    const text = normalizeNewlines(content);
    if (text.trim().length === 0) return [];
    try {
      return assemble(rawSnippets(filePath, text, kind, opts.minChars), opts);
    } catch {
      return assemble(plainText(filePath, text), opts);
    }
  } catch {
    return [];
  }
}

/**
 * Loads the tree-sitter grammars that the source files among these paths need, once per process (WebAssembly
 * grammars can only be loaded asynchronously, parseFile stays synchronous). Never rejects: a grammar that does not
 * load leaves its files to the line lexer.
 */
export async function loadSourceGrammars(filePaths: Iterable<string>): Promise<void> {
  const languages = new Set<string>();
  for (const p of filePaths) if (detectKind(p) === 'source') languages.add(sourceLanguage(p).language);
  await loadGrammars(languages);
}

/** `minChars`: what is smaller than this does not stand alone (Markdown merges it into its section). */
function rawSnippets(filePath: string, text: string, kind: DocKind, minChars: number): RawSnippet[] {
  switch (kind) {
    case 'markdown':
      return parseMarkdown(text, { mdx: extension(filePath) === 'mdx', frontMatter: true, inlineBelow: minChars });
    case 'rst':
      return parseRst(text);
    case 'notebook':
      return parseNotebook(text, minChars);
    case 'source': {
      const docs = sourceLanguage(filePath).family === 'rust' ? splitRustModuleDocs(text) : null;
      if (!docs) return parseSource(filePath, text);
      // Docs before any heading are the module's own page: titled by its file, as its preamble was.
      const markdown = parseMarkdown(docs.markdown, { mdx: false, frontMatter: false, inlineBelow: minChars }).map((r) => ({ ...r, title: r.title ?? baseName(filePath) }));
      return [...markdown, ...parseSource(filePath, docs.code)];
    }
    case 'text':
      return plainText(filePath, text);
  }
}

/** Plain text: the whole file as one info snippet, which the size cap cuts into windows at paragraph boundaries. */
function plainText(filePath: string, text: string): RawSnippet[] {
  return [{ type: 'info', title: baseName(filePath), content: text, language: null, breadcrumb: filePath, pos: 0, split: 'prose' }];
}
