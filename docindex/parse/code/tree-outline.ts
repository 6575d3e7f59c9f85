import type { SourceFamily } from '../languages.js';
import { IMPORT, classify, isAttachable, isComment } from './declarations.js';
import { parseTree, type SyntaxNode } from './grammar.js';
import type { Declaration, Outline } from './outline.js';

/**
 * The outline of a source file from its tree-sitter syntax tree: the root's children are the top-level
 * declarations, imports and statements (declarations.ts tells which); comments, decorators and attributes directly
 * above a declaration (no blank line, not trailing a line of code) belong to it. Null when the grammar is not
 * loaded, the parse fails or runs out of time, or the grammar did not understand a top-level node other than a
 * declaration (a merge conflict, syntax the grammar does not know): the line lexer then takes the file. An error
 * inside a declaration does not move declaration boundaries, so those keep the tree.
 */
export function treeOutline(language: string, family: Exclude<SourceFamily, 'lines'>, text: string, lineCount: number): Outline | null {
  const tree = parseTree(language, text);
  if (!tree) return null;
  try {
    const top = tree.rootNode.namedChildren.filter((n): n is SyntaxNode => n !== null);
    const importish = new Uint8Array(lineCount);
    const comment = new Uint8Array(lineCount);
    const decls: Declaration[] = [];
    const chain = new Chain();
    for (const node of top) {
      const first = node.startPosition.row;
      const last = lastRow(node);
      if (isAttachable(node) && chain.attach(first, last)) {
        if (isComment(node)) comment.fill(1, first, Math.min(last + 1, lineCount));
        continue;
      }
      const start = chain.startFor(first);
      chain.code(last);
      const kind = classify(node, family);
      if ((kind === null || kind === IMPORT) && node.hasError) return null;
      if (kind === IMPORT) importish.fill(1, first, Math.min(last + 1, lineCount));
      else if (kind) decls.push({ line: kind.core.startPosition.row, start, title: kind.title, members: members(kind.core).filter((b) => b > kind.core.startPosition.row) });
    }
    return { decls, importish, comment };
  } finally {
    tree.delete();
  }
}

/** Last line a node covers (a node that ends with a newline, like `/// doc` in Rust, ends at column 0 of the next). */
function lastRow(node: SyntaxNode): number {
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row - 1 : end.row;
}

/** The run of comments, decorators and attributes directly above the node being looked at. */
class Chain {
  private start = -1;
  private last = -1;
  private codeLast = -1;

  /** Adds an attachable node; false when it trails a line of code (`x = 1  # note`), which makes it code. */
  attach(first: number, last: number): boolean {
    if (first <= this.codeLast) return false;
    if (this.start < 0 || first > this.last + 1) this.start = first;
    this.last = last;
    return true;
  }

  /** Where a node starting at `first` starts with the run directly above it. */
  startFor(first: number): number {
    return this.start >= 0 && this.last >= first - 1 ? Math.min(this.start, first) : first;
  }

  /** A node that is not attachable ends the run. */
  code(last: number): void {
    this.start = -1;
    this.codeLast = Math.max(this.codeLast, last);
  }
}

/** Node types whose children are members or statements. */
const LISTS = new Set([
  // JS / TS
  'class_body',
  'interface_body',
  'object_type',
  'enum_body',
  'statement_block',
  'object',
  'array',
  // Python
  'block',
  'dictionary',
  'list',
  // Go
  'statement_list',
  'field_declaration_list',
  'interface_type',
  'literal_value',
  'type_declaration',
  'const_declaration',
  'var_declaration',
  'var_spec_list',
  // Rust
  'declaration_list',
  'enum_variant_list',
  // Java
  'annotation_type_body',
  'constructor_body',
  'enum_body_declarations',
]);

/**
 * Where an oversized declaration may be split: the starts of the members of its body (a class's members, a
 * function's statements, an object's properties, a describe block's tests), each with its comments and decorators.
 * A member that makes up most of the body is looked into as well, so that a class of one huge method is split at
 * that method's statements; other members stay whole.
 */
function members(core: SyntaxNode, depth = 0): number[] {
  const list = memberList(core);
  if (!list) return [];
  const starts = memberStarts(list.namedChildren.filter((n): n is SyntaxNode => n !== null));
  const big = widestChild(list);
  if (!big || depth >= 3 || 2 * span(big) <= span(list)) return starts;
  return [...new Set([...starts, ...members(big, depth + 1)])].sort((x, y) => x - y);
}

/** The node whose children are the members: the body, found through wrappers (export, decorators, a const's value, a call's callback). */
function memberList(core: SyntaxNode): SyntaxNode | null {
  let node: SyntaxNode | null = core;
  for (let depth = 0; node && depth < 10; depth++) {
    if (LISTS.has(node.type)) return node;
    node = node.childForFieldName('body') ?? widestChild(node);
  }
  return null;
}

function span(node: SyntaxNode): number {
  return lastRow(node) - node.startPosition.row;
}

function memberStarts(kids: readonly SyntaxNode[]): number[] {
  const out: number[] = [];
  const chain = new Chain();
  for (const kid of kids) {
    const first = kid.startPosition.row;
    if (isAttachable(kid) && chain.attach(first, lastRow(kid))) continue;
    const b = chain.startFor(first);
    chain.code(lastRow(kid));
    if (out[out.length - 1] !== b) out.push(b);
  }
  return out;
}

/** The named child covering the most lines (the later one on a tie), or null when none covers more than one. */
function widestChild(node: SyntaxNode): SyntaxNode | null {
  let best: SyntaxNode | null = null;
  let widest = 0;
  for (const kid of node.namedChildren) {
    if (!kid || isComment(kid)) continue;
    const s = span(kid);
    if (s > 0 && s >= widest) {
      best = kid;
      widest = s;
    }
  }
  return best;
}
