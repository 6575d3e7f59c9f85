import fs from 'node:fs/promises';
import path from 'node:path';
import { defaultRepoConfig } from '../parse/config.js';
import { selectFiles } from '../parse/select.js';

/**
 * A package archive narrowed to its documentation, for a version indexed from the package itself (its repository
 * was not reachable): READMEs, documentation folders (docs/, guides/, examples/, ...), prose files at the root and
 * notebooks. Source code is dropped: source-level docs come from the repository. Type declarations (`*.d.ts`,
 * `*.pyi`) are kept only when nothing but a README documents the package, since then they are its documentation.
 *
 * Which of these files get indexed (no changelogs, licenses, tests, translations, ...) stays the pipeline's
 * choice (parse/select.ts): it is asked here, not repeated, and only this narrowing is added to it.
 */
export interface PackageDocs {
  /** Paths relative to the root, '/'-separated, sorted. */
  keep: string[];
  /** Files not kept. */
  dropped: number;
  /** Type declarations were kept, as the package's documentation. */
  typeDeclarations: boolean;
}

const DOC_FOLDERS = new Set(['docs', 'doc', 'documentation', 'guides', 'guide', 'examples', 'example', 'tutorials', 'tutorial']);
const README = /^readme(?:\.\w+)?$/i;
const ROOT_DOC = /\.(?:md|mdx|markdown|rst|txt)$/i;
const NOTEBOOK = /\.ipynb$/i;
const DECLARATION = /\.d\.[mc]?ts$|\.pyi$/i;

/** Every regular file under `root`, relative and '/'-separated (extraction made no links: archive.ts). */
async function listFiles(root: string): Promise<string[]> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

/** How a package is documented: a crate by its doc comments (docs.rs is built from `src/`), others by their docs. */
export interface PackageDocsOptions {
  sourceIsDocumentation?: boolean;
}

/** What the package's documentation is, of the files under `root`. */
export async function selectPackageDocs(root: string, o: PackageDocsOptions = {}): Promise<PackageDocs> {
  const files = await listFiles(root);
  const docs: string[] = [];
  const declarations: string[] = [];
  for (const file of files) {
    const segments = file.split('/');
    const name = segments.pop()!;
    if (segments.some((d) => DOC_FOLDERS.has(d.toLowerCase())) || README.test(name) || NOTEBOOK.test(name)) docs.push(file);
    else if (o.sourceIsDocumentation && segments[0] === 'src') docs.push(file);
    else if (!segments.length && ROOT_DOC.test(name)) docs.push(file);
    else if (DECLARATION.test(name)) declarations.push(file);
  }
  // The pipeline's own rules decide what of it would be indexed: a CHANGELOG or LICENSE is no documentation.
  const indexed = selectFiles(docs, defaultRepoConfig()).included;
  const typeDeclarations = declarations.length > 0 && indexed.every((f) => README.test(f.slice(f.lastIndexOf('/') + 1)));
  const keep = [...indexed, ...(typeDeclarations ? selectFiles(declarations, defaultRepoConfig()).included : [])].sort();
  return { keep, dropped: files.length - keep.length, typeDeclarations };
}

/** Removes from `root` every file that is not the package's documentation, and the folders left empty. */
export async function pruneToPackageDocs(root: string, o: PackageDocsOptions = {}): Promise<PackageDocs> {
  await readmeFromMetadata(root);
  const docs = await selectPackageDocs(root, o);
  const keep = new Set(docs.keep);
  for (const file of await listFiles(root)) if (!keep.has(file)) await fs.rm(path.join(root, file), { force: true });
  await removeEmptyFolders(root);
  return docs;
}

async function removeEmptyFolders(dir: string): Promise<boolean> {
  let empty = true;
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && (await removeEmptyFolders(path.join(dir, e.name)))) await fs.rmdir(path.join(dir, e.name));
    else empty = false;
  }
  return empty;
}

/**
 * A Python package without a README file still has one: the long description in its metadata (PKG-INFO in an
 * sdist, `*.dist-info/METADATA` in a wheel), the body after the headers, as PyPI shows it. Written as the README
 * when the root has none.
 */
export async function readmeFromMetadata(root: string): Promise<string | null> {
  const top = await fs.readdir(root, { withFileTypes: true });
  if (top.some((e) => e.isFile() && README.test(e.name))) return null;
  const candidates = [
    ...top.filter((e) => e.isFile() && e.name === 'PKG-INFO').map((e) => e.name),
    ...top.filter((e) => e.isDirectory() && e.name.endsWith('.dist-info')).map((e) => `${e.name}/METADATA`),
  ];
  for (const candidate of candidates) {
    const text = await fs.readFile(path.join(root, candidate), 'utf8').catch(() => '');
    const split = text.search(/\r?\n\r?\n/);
    const body = split >= 0 ? text.slice(split).trim() : '';
    if (!body) continue;
    const type = /^Description-Content-Type:\s*([^;\r\n]+)/im.exec(text.slice(0, split))?.[1]?.trim().toLowerCase();
    const name = type === 'text/markdown' ? 'README.md' : type === 'text/plain' ? 'README.txt' : 'README.rst';
    await fs.writeFile(path.join(root, name), `${body}\n`);
    return name;
  }
  return null;
}
