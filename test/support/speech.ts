import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { onPath } from '../../core/binaries.js';
import type { Logger } from '../../core/log.js';
import { aptInstall, aptUnavailable } from '../../runtime/apt.js';

/**
 * Spoken test audio: each utterance said by one of two espeak-ng voices, joined by sox with a pause between them,
 * as a 16 kHz mono WAV. espeak-ng and sox come from apt-get where they are missing (a fresh CI machine), installed
 * once by the test run's global setup (test/support/global-setup.ts), which apt-get's lock requires.
 */
export const VOICES = ['en-us+m3', 'en-us+f3'] as const;
const PAUSE_SECONDS = 0.8;
const TOOLS = ['espeak-ng', 'sox'];

/** Installs espeak-ng and sox when missing: null when they are there, else why they cannot be. */
export async function provisionSpeechTools(log: Logger): Promise<string | null> {
  const missing = [];
  for (const tool of TOOLS) if (!(await onPath(tool))) missing.push(tool);
  if (!missing.length) return null;
  const why = await aptUnavailable();
  if (why) return `spoken test audio needs ${missing.join(' and ')}: ${why}`;
  try {
    await aptInstall(log, missing);
    return null;
  } catch (err) {
    return `installing ${missing.join(' and ')} failed: ${(err as Error).message}`;
  }
}

export async function spokenAudio(dir: string, utterances: { voice: 0 | 1; text: string }[]): Promise<Buffer> {
  const run = promisify(execFile);
  await fs.mkdir(dir, { recursive: true });
  const pause = path.join(dir, 'pause.wav');
  await run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', pause, 'trim', '0', String(PAUSE_SECONDS)]);
  const parts: string[] = [];
  for (const [i, u] of utterances.entries()) {
    const said = path.join(dir, `said-${i}.wav`);
    const file = path.join(dir, `utterance-${i}.wav`);
    await run('espeak-ng', ['-v', VOICES[u.voice], '-s', '165', '-w', said, u.text]);
    await run('sox', [said, '-r', '16000', '-c', '1', '-b', '16', file]);
    parts.push(...(i ? [pause] : []), file);
  }
  const out = path.join(dir, 'dialogue.wav');
  await run('sox', [...parts, out]);
  return fs.readFile(out);
}
