/**
 * Builds the web interface (web/src: Preact and TSX) with esbuild: the script and the stylesheet under /assets/
 * with a content hash in their names (cached for good), and index.html, the manifest, the service worker and the
 * icons as they are (revalidated on every load).
 *
 *   node --import tsx web/build.ts     writes dist/web/ (the last step of `npm run build`)
 *
 * The API calls buildWebApp() itself when it runs from the sources (api/web.ts), so `npm start` and the tests need
 * no build step. This file is not compiled into dist/: production serves what it wrote.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const WEB_DIR = fileURLToPath(new URL('.', import.meta.url));
const STATIC_FILES = ['manifest.webmanifest', 'sw.js', 'icon.svg', 'icon-192.png', 'icon-512.png'];

/** The app's files by URL path (`/index.html`, `/assets/app-<hash>.js`, ...). */
export type WebFiles = Map<string, Uint8Array>;

export async function buildWebApp(): Promise<WebFiles> {
  // Loaded here, not at the top: the API imports this module only when it runs from the sources (esbuild is a
  // development dependency).
  const esbuild = await import('esbuild');
  const outdir = path.join(WEB_DIR, 'assets'); // nothing is written there (write: false); it names the outputs
  const result = await esbuild.build({
    absWorkingDir: WEB_DIR,
    entryPoints: [
      { in: 'src/main.tsx', out: 'app' },
      { in: 'styles.css', out: 'styles' },
    ],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    charset: 'utf8',
    entryNames: '[name]-[hash]',
    outdir,
    write: false,
    logLevel: 'silent',
  });
  const files: WebFiles = new Map();
  const entries: Record<string, string> = {};
  for (const file of result.outputFiles) {
    const urlPath = `/assets/${path.relative(outdir, file.path).split(path.sep).join('/')}`;
    files.set(urlPath, file.contents);
    const entry = /^\/assets\/(app|styles)-\w+\.(?:js|css)$/.exec(urlPath)?.[1];
    if (entry) entries[entry] = urlPath;
  }
  const template = await fs.readFile(path.join(WEB_DIR, 'index.html'), 'utf8');
  const html = template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const url = entries[name];
    if (!url) throw new Error(`web/index.html names {{${name}}}, which the build did not produce`);
    return url;
  });
  files.set('/index.html', new TextEncoder().encode(html));
  for (const name of STATIC_FILES) files.set(`/${name}`, await fs.readFile(path.join(WEB_DIR, name)));
  return files;
}

/** Replaces `outDir` with the app's files. */
export async function writeWebApp(files: WebFiles, outDir: string): Promise<void> {
  await fs.rm(outDir, { recursive: true, force: true });
  for (const [urlPath, body] of files) {
    const target = path.join(outDir, ...urlPath.split('/'));
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, body);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outDir = fileURLToPath(new URL('../dist/web/', import.meta.url));
  const files = await buildWebApp();
  await writeWebApp(files, outDir);
  const bytes = [...files.values()].reduce((n, b) => n + b.length, 0);
  console.log(`wrote ${outDir} (${files.size} files, ${(bytes / 1024).toFixed(0)} KiB)`);
}
