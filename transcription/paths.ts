import path from 'node:path';

/**
 * Where a transcription job's files live, all under DATA_DIR (which the API and the transcription workers share):
 * - `uploads/<jobId>/`: the uploaded or recorded file, kept until the job succeeds (a retry reads it again);
 * - `tmp/transcription/<jobId>/<runId>/<step>-<attempt>/`: downloads, captions and the prepared audio, a folder per run
 *   and attempt, removed when the run ends;
 * - `transcripts/<jobId>/`: the result files (SRT, TXT, MD, JSON), the job's `outputDir`;
 * - `audio/<jobId>/`: the compressed copy of the audio the web page plays (transcription/playback.ts), kept while the
 *   job is, removed by housekeeping once the job is gone or failed.
 */
export const uploadDir = (dataDir: string, jobId: string) => path.join(dataDir, 'uploads', safeId(jobId));
export const workDir = (dataDir: string, jobId: string) => path.join(dataDir, 'tmp', 'transcription', safeId(jobId));
/** One run's folder inside the job's: each attempt of each step works in a folder of its own below it. */
export const runDir = (dataDir: string, jobId: string, runId: string) => path.join(workDir(dataDir, jobId), safeId(runId));
export const outputDir = (dataDir: string, jobId: string) => path.join(dataDir, 'transcripts', safeId(jobId));
export const playbackDir = (dataDir: string, jobId: string) => path.join(dataDir, 'audio', safeId(jobId));
/** The playback copy in it, and what it is served as. */
export const PLAYBACK_FILE = 'audio.webm';
export const PLAYBACK_CONTENT_TYPE = 'audio/webm';

/** Job ids are UUIDs; anything else must never become a path. */
function safeId(jobId: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(jobId)) throw new Error(`not a job id: ${JSON.stringify(jobId.slice(0, 80))}`);
  return jobId;
}

/** Upload file extensions taken (audio and video containers ffmpeg reads), lower case without the dot. */
export const MEDIA_EXTENSIONS = [
  'mp3', 'wav', 'm4a', 'aac', 'flac', 'ogg', 'oga', 'opus', 'weba', 'webm', 'mp4', 'm4v', 'mov', 'mkv', 'avi', 'wma',
  'amr', '3gp', 'mpeg', 'mpg', 'ts', 'caf', 'aiff', 'aif',
] as const;

/** The stored name of an upload: `source.<ext>` (the client's name is kept in the database, never used as a path). */
export function storedUploadName(clientName: string, mimeType: string): string | undefined {
  const ext = path.extname(clientName).slice(1).toLowerCase();
  if ((MEDIA_EXTENSIONS as readonly string[]).includes(ext)) return `source.${ext}`;
  const byType: Record<string, string> = {
    'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav',
    'audio/webm': 'webm', 'video/webm': 'webm', 'audio/ogg': 'ogg', 'audio/mp4': 'm4a', 'audio/x-m4a': 'm4a',
    'video/mp4': 'mp4', 'audio/aac': 'aac', 'audio/flac': 'flac', 'video/quicktime': 'mov',
  };
  const fromType = byType[mimeType.split(';')[0]!.trim().toLowerCase()];
  return fromType ? `source.${fromType}` : undefined;
}
