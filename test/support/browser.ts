import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

/** Where screenshots go (gitignored): test-artifacts/web/<name>.png. */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url));

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions and console errors of the page, to assert there were none. */
  pageErrors: string[];
  /** Saves a full-page screenshot, at the phone's width when asked; answers the file. */
  screenshot(name: string, o?: { phone?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Debian's Chromium (found, or installed by runtime/chromium.ts: never Playwright's own downloads) driven by
 * playwright-core, headless, with a fresh profile. With `microphone`, getUserMedia is answered without a prompt by
 * Chromium's fake device, which plays that WAV file (16-bit PCM) in a loop.
 */
export async function launchBrowser(o: { microphone?: Buffer } = {}): Promise<TestBrowser> {
  // Found or installed once for the run by global-setup.ts.
  const binary = inject('chromium');
  if ('error' in binary) throw new Error(binary.error);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-chromium-'));
  const wav = path.join(dir, 'microphone.wav');
  if (o.microphone) await fs.writeFile(wav, o.microphone);
  // launchPersistentContext passes --user-data-dir (this fresh folder) and --headless itself.
  const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: binary.path,
    headless: true,
    viewport: DESKTOP,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(o.microphone ? ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`] : []),
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await fs.mkdir(SCREENSHOTS, { recursive: true });

  return {
    context,
    page,
    pageErrors,
    screenshot: async (name, so = {}) => {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      if (so.phone) await page.setViewportSize(PHONE);
      try {
        await page.screenshot({ path: file, fullPage: true });
      } finally {
        if (so.phone) await page.setViewportSize(DESKTOP);
      }
      return file;
    },
    close: async () => {
      await context.close().catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
