/**
 * Audio processing modes for the audio that is transcribed, and how `auto` picks one. Pure: the ffmpeg calls live
 * in transcription/media.ts; this module holds the filter chains and the decision, so both are unit-tested.
 *
 * Every mode ends in 16 kHz mono 16-bit PCM WAV, which speech recognisers take as is.
 *
 * | mode         | filter chain (ffmpeg -af)                                                           |
 * |--------------|--------------------------------------------------------------------------------------|
 * | `none`       | (none: only the conversion to 16 kHz mono)                                           |
 * | `standard`   | `highpass=f=80` (rumble, hum), `afftdn=nr=12:nf=-50` (light FFT denoise),            |
 * |              | `loudnorm=I=-16:TP=-1.5:LRA=11` (EBU R128 loudness to -16 LUFS)                      |
 * | `aggressive` | `highpass=f=120`, `lowpass=f=7000` (speech band only), `afftdn=nr=24:nf=-40:tn=1`    |
 * |              | (strong denoise that tracks the noise floor), `dynaudnorm=f=150:g=15` (evens out      |
 * |              | quiet and loud speakers), `loudnorm=I=-16:TP=-1.5:LRA=7`                              |
 * | `auto`       | measures the input, then one of the three above (see `chooseMode`)                   |
 */
export const AUDIO_MODES = ['none', 'standard', 'aggressive', 'auto'] as const;
export type AudioMode = (typeof AUDIO_MODES)[number];
export type AppliedAudioMode = Exclude<AudioMode, 'auto'>;

export const AUDIO_FILTERS: Record<AppliedAudioMode, string | null> = {
  none: null,
  standard: 'highpass=f=80,afftdn=nr=12:nf=-50,loudnorm=I=-16:TP=-1.5:LRA=11',
  aggressive: 'highpass=f=120,lowpass=f=7000,afftdn=nr=24:nf=-40:tn=1,dynaudnorm=f=150:g=15,loudnorm=I=-16:TP=-1.5:LRA=7',
};

/**
 * The analysis pass of `auto` (`ffmpeg -t 600 -i in -af <this> -f null -`): the RMS level of every 50 ms window
 * (800 samples at 16 kHz, printed by astats + ametadata) and volumedetect's mean and peak. The first ten minutes
 * are measured: enough to know the recording, and bounded for long ones.
 */
export const ANALYSIS_SECONDS = 600;
export const ANALYSIS_FILTER =
  'aresample=16000,asetnsamples=n=800:p=0,astats=metadata=1:reset=1,ametadata=print:key=lavfi.astats.Overall.RMS_level,volumedetect';

/** What the analysis measured, in dBFS. */
export interface AudioMeasurement {
  /** volumedetect: mean volume. */
  meanVolumeDb: number;
  /** volumedetect: highest sample. */
  maxVolumeDb: number;
  /** 10th percentile of the 50 ms window levels: the noise floor between words. */
  noiseFloorDb: number;
  /** 95th percentile of the 50 ms window levels: the level of speech. */
  speechLevelDb: number;
  /** How many windows were measured. */
  windows: number;
}

export interface ModeChoice {
  mode: AppliedAudioMode;
  reason: string;
}

/** Speech below this means the file is silence: filtering cannot help, and loudnorm would only amplify noise. */
export const SILENCE_DB = -70;
/** A noise floor above this (with a signal-to-noise ratio under SNR_AGGRESSIVE_DB) calls for strong denoising. */
export const NOISY_FLOOR_DB = -50;
export const SNR_AGGRESSIVE_DB = 25;
/** A noise floor above this, or quiet or clipping speech, calls for the standard chain. */
export const AUDIBLE_FLOOR_DB = -65;
export const QUIET_MEAN_DB = -30;
export const CLIPPING_DB = -0.5;

/**
 * The decision of `auto`, from the noise floor, the speech level and the overall volume:
 * - silence (speech level under -70 dBFS): `none`;
 * - noisy: noise floor over -50 dBFS and speech less than 25 dB above it: `aggressive`;
 * - audible noise (floor over -65 dBFS), quiet speech (mean under -30 dBFS) or clipping (peak over -0.5 dBFS):
 *   `standard`;
 * - otherwise the recording is clean and at a good level: `none`.
 */
export function chooseMode(m: AudioMeasurement): ModeChoice {
  const snr = m.speechLevelDb - m.noiseFloorDb;
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : String(n));
  if (!(m.speechLevelDb > SILENCE_DB)) return { mode: 'none', reason: `silent input (speech level ${f(m.speechLevelDb)} dBFS)` };
  if (m.noiseFloorDb > NOISY_FLOOR_DB && snr < SNR_AGGRESSIVE_DB) {
    return { mode: 'aggressive', reason: `noise floor ${f(m.noiseFloorDb)} dBFS, speech ${f(snr)} dB above it` };
  }
  if (m.noiseFloorDb > AUDIBLE_FLOOR_DB) return { mode: 'standard', reason: `audible noise floor ${f(m.noiseFloorDb)} dBFS` };
  if (m.meanVolumeDb < QUIET_MEAN_DB) return { mode: 'standard', reason: `quiet: mean ${f(m.meanVolumeDb)} dBFS` };
  if (m.maxVolumeDb > CLIPPING_DB) return { mode: 'standard', reason: `peaks at ${f(m.maxVolumeDb)} dBFS` };
  return { mode: 'none', reason: `clean: noise floor ${f(m.noiseFloorDb)} dBFS, mean ${f(m.meanVolumeDb)} dBFS` };
}

/** Digital silence measures -inf; it counts as this. */
const FLOOR_DB = -120;

function db(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (/^-inf$/i.test(raw)) return FLOOR_DB;
  const n = Number(raw);
  return Number.isFinite(n) ? Math.max(FLOOR_DB, n) : undefined;
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Reads the analysis pass's stderr: one `RMS_level=` line per window, and volumedetect's summary. */
export function parseAnalysis(stderr: string): AudioMeasurement {
  const levels = [...stderr.matchAll(/lavfi\.astats\.Overall\.RMS_level=(\S+)/g)]
    .map((m) => db(m[1]))
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
  const mean = db(/mean_volume:\s*(\S+) dB/.exec(stderr)?.[1]);
  const max = db(/max_volume:\s*(\S+) dB/.exec(stderr)?.[1]);
  if (!levels.length || mean === undefined || max === undefined) {
    throw new Error('ffmpeg printed no volume statistics (is there an audio stream?)');
  }
  return {
    meanVolumeDb: mean,
    maxVolumeDb: max,
    noiseFloorDb: percentile(levels, 0.1),
    speechLevelDb: percentile(levels, 0.95),
    windows: levels.length,
  };
}
