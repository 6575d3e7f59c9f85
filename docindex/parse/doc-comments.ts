/**
 * Documentation that lives in source comments and is written in Markdown: a Rust module's inner doc comments (`//!`),
 * which rustdoc renders as the module's page (a crate's guide often lives there, as in clap's tutorial and cookbook
 * modules). They are split off the source so that they are indexed as Markdown, by heading, like any other page,
 * instead of as one comment above the first declaration.
 */

const INNER_DOC = /^\s*\/\/!(?: ?)(.*)$/;
/** `#![doc = include_str!("...")]` and other inner `doc` attributes: their text is another file, indexed on its own. */
const INNER_DOC_ATTRIBUTE = /^\s*#!\[doc\s*=/;

export interface SplitDocs {
  /** The Markdown, one line per line of the file (other lines blank), so its positions are the file's lines. */
  markdown: string;
  /** The source without those lines (blanked, so lines keep their numbers). */
  code: string;
}

/** A Rust file's inner doc comments and the rest of it, or null when it has none. */
export function splitRustModuleDocs(text: string): SplitDocs | null {
  const lines = text.split('\n');
  const markdown: string[] = [];
  const code: string[] = [];
  let found = false;
  for (const line of lines) {
    const doc = INNER_DOC.exec(line);
    if (doc) {
      found = true;
      markdown.push(doc[1]!);
      code.push('');
    } else if (INNER_DOC_ATTRIBUTE.test(line)) {
      markdown.push('');
      code.push('');
    } else {
      markdown.push('');
      code.push(line);
    }
  }
  return found ? { markdown: dropEmptyFences(markdown).join('\n'), code: code.join('\n') } : null;
}

const FENCE = /^\s*(`{3,}|~{3,})[\w+-]*\s*$/;

/** A fence whose only content was an included file ("```rust", the attribute, "```") says nothing: blanked. */
function dropEmptyFences(lines: string[]): string[] {
  const closes = (line: string, marker: string) => line.trim().startsWith(marker) && /^[`~]+$/.test(line.trim());
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    let j = i + 1;
    while (j < lines.length && !closes(lines[j]!, open[1]!)) j++;
    if (j < lines.length && lines.slice(i + 1, j).every((l) => l.trim() === '')) {
      lines[i] = '';
      lines[j] = '';
    }
    // Past the closing line, so a fence's content is never read as fences.
    i = j;
  }
  return lines;
}
