import fs from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '../../core/log.js';
import { findFfmpeg } from '../../core/tools.js';

/**
 * The real ffmpeg behind a wrapper (FFMPEG_PATH) that records every run and, once armed, makes the next conversion
 * misbehave: `long` works for a long time (it prints progress twice a second until killed), `hang` hangs (no output,
 * no CPU). Everything else is passed to the real ffmpeg.
 */
export interface FfmpegWrapper {
  path: string;
  arm(): Promise<void>;
  /** The armed conversion has begun. */
  misbehaving(): Promise<boolean>;
  /** Each run; `analysis` is a measurement (a filter's output thrown away), not the header read of probeDuration. */
  runs(): Promise<{ at: number; args: string[]; conversion: boolean; analysis: boolean }[]>;
}

export async function writeFfmpegWrapper(dir: string, armed: 'long' | 'hang'): Promise<FfmpegWrapper> {
  const real = await findFfmpeg(createLogger('silent'));
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, 'ffmpeg');
  const misbehave =
    armed === 'long'
      ? `let t = 0; setInterval(() => process.stdout.write('out_time_ms=' + (t += 200000) + '\\nprogress=continue\\n'), 200);`
      : 'setTimeout(() => undefined, 3_600_000);';
  await fs.writeFile(
    file,
    `#!${process.execPath}
const fs = require('fs'); const path = require('path'); const { spawnSync } = require('child_process');
const args = process.argv.slice(2);
const real = ${JSON.stringify([real.command, ...real.args])};
if (!args.includes('-version')) fs.appendFileSync(path.join(__dirname, 'runs.jsonl'), JSON.stringify({ at: Date.now(), args }) + '\\n');
if (args.includes('pcm_s16le') && fs.existsSync(path.join(__dirname, 'armed'))) {
  fs.rmSync(path.join(__dirname, 'armed')); fs.writeFileSync(path.join(__dirname, 'misbehaving'), '');
  ${misbehave}
} else {
  const r = spawnSync(real[0], [...real.slice(1), ...args], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
`,
    { mode: 0o755 },
  );
  return {
    path: file,
    arm: () => fs.writeFile(path.join(dir, 'armed'), ''),
    misbehaving: () => fs.stat(path.join(dir, 'misbehaving')).then(() => true, () => false),
    runs: async () =>
      (await fs.readFile(path.join(dir, 'runs.jsonl'), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { at: number; args: string[] })
        .map((r) => ({ ...r, conversion: r.args.includes('pcm_s16le'), analysis: r.args.includes('null') && r.args.includes('-af') })),
  };
}
