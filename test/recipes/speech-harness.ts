import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FakeAsr, type FakeSubmission } from '../../fakes/fake-asr.js';
import { wav } from '../../fakes/media.js';
import { freePort } from '../../fakes/ports.js';
import type { FakeYtDlpPost } from '../../fakes/recipe-fakes.js';
import { startRecipeHarness, type RecipeHarness } from '../support/recipes.js';

/**
 * The recipe queue with the transcription service beside it (docs/recipes.md, "The video's speech"): the API and
 * the workers of both task queues, the fake ASR backend (callback protocol, answering with the spoken recipe), and
 * posts whose video the fake yt-dlp serves.
 */
export interface SpeechHarness extends RecipeHarness {
  asr: FakeAsr;
  asrPort: number;
  /** A post with a video: its caption, title, length; registered with the fake yt-dlp. */
  videoPost(name: string, o: { caption: string; title?: string; seconds?: number; pictures?: string[]; video?: string; downloadError?: string }): Promise<string>;
  /** Stops the backend (a backend that is down); `restartAsr` brings it back on the same port. */
  stopAsr(): Promise<void>;
  restartAsr(): Promise<void>;
  dir: string;
}

/** What the fake backend "hears" in every video: a recipe, an ingredient or step per segment. */
export const SPOKEN_RECIPE = ['- 200 g spaghetti', '- 1 lemon, zested', '- 30 g butter', '1. Boil the pasta.', '2. Toss it with butter and lemon.'];

function speak(asr: FakeAsr): void {
  asr.autoCompleteMs = 50;
  asr.result = (job: FakeSubmission) => ({ id: job.id, status: 'completed', segments: SPOKEN_RECIPE.map((text, i) => ({ start: i * 2, end: i * 2 + 1.8, text })) });
}

export async function startSpeechHarness(o: { env?: Record<string, string>; manager?: 'mealie' | 'tandoor' } = {}): Promise<SpeechHarness> {
  const [asrPort, apiPort] = await Promise.all([freePort(), freePort()]);
  let asr = await FakeAsr.start({ port: asrPort });
  speak(asr);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-speech-'));
  const audio = path.join(dir, 'speech.wav');
  await fs.writeFile(audio, wav({ seconds: 3, pauses: true }));
  const h = await startRecipeHarness({
    queues: ['recipes', 'transcription'],
    ...(o.manager && { manager: o.manager }),
    env: {
      PORT: String(apiPort),
      PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
      ASR_BASE_URL: asr.url,
      TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '5000',
      TRANSCRIPTION_MODEL_WAIT_MAX_MS: '5000',
      TRANSCRIPTION_WEBHOOK_RESPONSE_MS: '15000',
      QUEUE_TIMEOUT_MS: '8000',
      ...o.env,
    },
  });
  const posts: Record<string, FakeYtDlpPost> = {};
  const harness: SpeechHarness = {
    ...h,
    get asr() {
      return asr;
    },
    asrPort,
    dir,
    async videoPost(name, p) {
      const url = h.site.add(name, { title: p.title ?? name, caption: p.caption, picture: true });
      const entries = p.pictures?.map((u) => ({ _type: 'url', ext: 'jpg', url: u }));
      posts[url] = {
        info: {
          title: p.title ?? name,
          description: p.caption,
          thumbnail: h.site.pictureUrl(name),
          extractor_key: 'Instagram',
          duration: p.seconds ?? 30,
          ext: 'mp4',
          ...(entries && { entries }),
        },
        media: audio,
        ...(p.video && { video: p.video }),
        ...(p.downloadError && { downloadError: p.downloadError }),
      };
      await h.ytdlp.set(posts);
      return url;
    },
    async stopAsr() {
      await asr.close();
    },
    async restartAsr() {
      asr = await FakeAsr.start({ port: asrPort });
      speak(asr);
    },
    stop: async () => {
      await h.stop();
      await Promise.allSettled([asr.close(), fs.rm(dir, { recursive: true, force: true })]);
    },
  };
  return harness;
}
