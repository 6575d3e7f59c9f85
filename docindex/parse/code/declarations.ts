import type { SourceFamily } from '../languages.js';
import type { SyntaxNode } from './grammar.js';

/**
 * What a top-level syntax node is, per language family: an import (package, use) statement, a declaration with its
 * title and the node it is about (the class below its decorators, the definition inside `export`), or neither (a
 * statement that stays with the declaration before it). Node types are those of the tree-sitter grammars shipped
 * in @vscode/tree-sitter-wasm (typescript/tsx/javascript, python, go, rust, java).
 */
export const IMPORT = 'import';
export interface Found {
  title: string;
  core: SyntaxNode;
}
export type Kind = Found | typeof IMPORT | null;

const COMMENTS = new Set(['comment', 'line_comment', 'block_comment']);
/** What attaches to the declaration below it: comments, Rust attributes, decorators between class members. */
const ATTACHABLE = new Set([...COMMENTS, 'attribute_item', 'decorator']);

export function isComment(node: SyntaxNode): boolean {
  return COMMENTS.has(node.type);
}

export function isAttachable(node: SyntaxNode): boolean {
  return ATTACHABLE.has(node.type);
}

export function classify(node: SyntaxNode, family: Exclude<SourceFamily, 'lines'>): Kind {
  switch (family) {
    case 'js':
      return jsTop(node);
    case 'python':
      return pythonTop(node);
    case 'go':
      return goTop(node);
    case 'rust':
      return rustTop(node);
    case 'java':
      return javaTop(node);
  }
}

function field(node: SyntaxNode, name: string): SyntaxNode | null {
  return node.childForFieldName(name);
}

/** A node's text on one line, cut to `max` characters (titles are short). */
function short(node: SyntaxNode | null, max = 100): string {
  if (!node) return '';
  const text = node.text.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function named(prefix: string, node: SyntaxNode, nameField = 'name'): Found {
  const name = short(field(node, nameField), 80);
  return { title: name ? `${prefix} ${name}` : prefix, core: node };
}

// JavaScript / TypeScript

const JS_FUNCTIONS = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);
const TEST_SUITES = new Set(['describe', 'suite', 'test', 'it']);

function jsTop(node: SyntaxNode): Kind {
  switch (node.type) {
    case 'import_statement':
    case 'hash_bang_line':
      return IMPORT;
    case 'export_statement': {
      if (field(node, 'source')) return IMPORT; // export ... from '...'
      const decl = field(node, 'declaration');
      if (decl) return jsDeclaration(decl);
      const value = field(node, 'value');
      return value ? jsDefault(value) : null; // `export { a, b };` stays with what it exports
    }
    case 'expression_statement': {
      const e = node.namedChild(0);
      return e ? jsExpression(e) : null;
    }
    default:
      return jsDeclaration(node);
  }
}

function jsDeclaration(node: SyntaxNode): Kind {
  switch (node.type) {
    case 'function_declaration':
    case 'generator_function_declaration':
    case 'function_signature':
      return named('function', node);
    case 'class_declaration':
    case 'abstract_class_declaration': {
      const found = named('class', node);
      return field(node, 'name') ? found : { ...found, title: 'class default' };
    }
    case 'interface_declaration':
      return named('interface', node);
    case 'type_alias_declaration':
      return named('type', node);
    case 'enum_declaration':
      return named('enum', node);
    case 'internal_module':
    case 'module':
      return named('namespace', node);
    case 'ambient_declaration': {
      const inner = node.namedChild(0);
      if (!inner || inner.type === 'statement_block') return { title: 'declare global', core: node };
      return jsDeclaration(inner);
    }
    case 'lexical_declaration':
    case 'variable_declaration':
      return jsVariable(node);
    default:
      return null;
  }
}

/** `const x = ...`: a function when its value is one; an import when every value is a `require(...)`. */
function jsVariable(node: SyntaxNode): Kind {
  const declarators = node.namedChildren.filter((n): n is SyntaxNode => n?.type === 'variable_declarator');
  if (declarators.length && declarators.every((d) => isRequire(field(d, 'value')))) return IMPORT;
  const first = declarators[0];
  const name = first && field(first, 'name');
  if (!first || name?.type !== 'identifier') return null;
  const value = field(first, 'value');
  return { title: `${value && JS_FUNCTIONS.has(value.type) ? 'function' : 'const'} ${short(name, 80)}`, core: node };
}

/** `require('x')`, `require('x').y`, `require('debug')('app')`. */
function isRequire(node: SyntaxNode | null): boolean {
  for (let n = node, depth = 0; n && depth < 4; depth++) {
    if (n.type === 'call_expression') {
      const fn = field(n, 'function');
      if (fn?.type === 'identifier' && fn.text === 'require') return true;
      n = fn;
    } else if (n.type === 'member_expression') n = field(n, 'object');
    else return false;
  }
  return false;
}

/** `export default <value>`; a bare name (`export default Router;`) stays with what it exports. */
function jsDefault(value: SyntaxNode): Kind {
  if (value.type === 'identifier' || value.type === 'member_expression') return null;
  if (value.type === 'class') return { title: field(value, 'name') ? `class ${short(field(value, 'name'), 80)}` : 'class default', core: value };
  if (JS_FUNCTIONS.has(value.type)) return { title: field(value, 'name') ? `function ${short(field(value, 'name'), 80)}` : 'export default function', core: value };
  return { title: 'export default', core: value };
}

function jsExpression(e: SyntaxNode): Kind {
  switch (e.type) {
    case 'string':
      return IMPORT; // 'use strict', 'use client'
    case 'internal_module':
      return named('namespace', e);
    case 'assignment_expression':
      return jsExports(e);
    case 'call_expression':
      return jsSuite(e);
    default:
      return null;
  }
}

/** `module.exports = ...`, `exports.x = ...`, `module.exports.x = ...`. */
function jsExports(e: SyntaxNode): Kind {
  const m = /^(?:module\.)?exports(?:\.([\w$]+))?$/.exec(short(field(e, 'left')));
  const right = field(e, 'right');
  if (!m || !right || right.type === 'identifier' || right.type === 'member_expression') return null;
  if (isRequire(right)) return IMPORT;
  const own = short(field(right, 'name'), 80);
  if (right.type === 'class') return { title: `class ${own || m[1] || 'default'}`, core: right };
  if (JS_FUNCTIONS.has(right.type) && (m[1] || own)) return { title: `function ${m[1] ?? own}`, core: right };
  return { title: m[1] ? `exports.${m[1]}` : 'module.exports', core: right };
}

/** Test suites read like usage examples: `describe('Router', ...)` is a declaration too. */
function jsSuite(e: SyntaxNode): Kind {
  let fn = field(e, 'function');
  if (fn?.type === 'member_expression') fn = field(fn, 'object'); // describe.each, it.only
  if (fn?.type !== 'identifier' || !TEST_SUITES.has(fn.text)) return null;
  const first = field(e, 'arguments')?.namedChild(0);
  if (!first || (first.type !== 'string' && first.type !== 'template_string')) return null;
  const label = first.text.slice(1, -1);
  if (label.length === 0 || label.length > 80 || label.includes('\n')) return null;
  return { title: `${fn.text} ${label}`, core: e };
}

// Python

function pythonTop(node: SyntaxNode): Kind {
  switch (node.type) {
    case 'import_statement':
    case 'import_from_statement':
    case 'future_import_statement':
      return IMPORT;
    case 'expression_statement': {
      const a = node.namedChild(0);
      return a?.type === 'assignment' && field(a, 'left')?.text === '__all__' ? IMPORT : null;
    }
    case 'function_definition':
      return named('def', node);
    case 'class_definition':
      return named('class', node);
    case 'decorated_definition': {
      const def = field(node, 'definition');
      return def ? pythonTop(def) : null;
    }
    default:
      return null;
  }
}

// Go

function goTop(node: SyntaxNode): Kind {
  switch (node.type) {
    case 'package_clause':
    case 'import_declaration':
      return IMPORT;
    case 'function_declaration':
      return named('func', node);
    case 'method_declaration': {
      const recv = goReceiver(field(node, 'receiver'));
      const name = short(field(node, 'name'), 80);
      return { title: recv ? `func ${recv}.${name}` : `func ${name}`, core: node };
    }
    case 'type_declaration':
    case 'const_declaration':
    case 'var_declaration':
      return goSpecs(node);
    default:
      return null;
  }
}

/** `(s *Server)` -> `Server`, `(l *List[T])` -> `List`. */
function goReceiver(params: SyntaxNode | null): string {
  let t = params?.namedChildren.find((n) => n?.type === 'parameter_declaration') ?? null;
  t = t && field(t, 'type');
  for (let depth = 0; t && depth < 4 && t.type !== 'type_identifier'; depth++) {
    t = t.type === 'generic_type' ? field(t, 'type') : t.namedChild(0);
  }
  return t ? short(t, 80) : '';
}

/** `type Server struct`, `var ErrNotFound`; a grouped `type (...)` lists its first names: `type (Reader, Writer, …)`. */
function goSpecs(node: SyntaxNode): Found {
  const keyword = node.type.replace('_declaration', '');
  const names: string[] = [];
  const collect = (n: SyntaxNode) => {
    for (const kid of n.namedChildren) {
      if (!kid || isComment(kid)) continue;
      if (kid.type === 'var_spec_list') collect(kid);
      else names.push(short(field(kid, 'name'), 60));
    }
  };
  collect(node);
  const grouped = node.children.some((c) => c?.type === '(') || node.namedChildren.some((c) => c?.type === 'var_spec_list');
  if (!grouped) return { title: `${keyword} ${names[0] ?? ''}`.trim(), core: node };
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  return { title: `${keyword} (${shown || '…'})`, core: node };
}

// Rust

const RUST_ITEMS: Record<string, string> = {
  function_item: 'fn',
  function_signature_item: 'fn',
  struct_item: 'struct',
  enum_item: 'enum',
  union_item: 'union',
  type_item: 'type',
  const_item: 'const',
  static_item: 'static',
  trait_item: 'trait',
  macro_definition: 'macro',
};

function rustTop(node: SyntaxNode): Kind {
  switch (node.type) {
    case 'use_declaration':
    case 'extern_crate_declaration':
    case 'inner_attribute_item':
      return IMPORT;
    case 'mod_item':
      return field(node, 'body') ? named('mod', node) : IMPORT; // `mod x;` only names a file
    case 'impl_item': {
      const trait = field(node, 'trait');
      const type = short(field(node, 'type'));
      return { title: trait ? `impl ${short(trait)} for ${type}` : `impl ${type}`, core: node };
    }
    case 'foreign_mod_item': {
      const abi = node.namedChildren.find((n) => n?.type === 'extern_modifier');
      return { title: abi ? short(abi) : 'extern', core: node };
    }
    default: {
      const keyword = Object.hasOwn(RUST_ITEMS, node.type) ? RUST_ITEMS[node.type] : undefined;
      return keyword ? named(keyword, node) : null;
    }
  }
}

// Java

const JAVA_TYPES: Record<string, string> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  record_declaration: 'record',
  annotation_type_declaration: 'annotation',
};

function javaTop(node: SyntaxNode): Kind {
  if (node.type === 'package_declaration' || node.type === 'import_declaration') return IMPORT;
  const keyword = Object.hasOwn(JAVA_TYPES, node.type) ? JAVA_TYPES[node.type] : undefined;
  return keyword ? named(keyword, node) : null;
}
