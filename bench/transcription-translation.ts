import type { Orm } from '../db/orm.js';
import type { FakeLlm } from '../fakes/recipe-fakes.js';
import { Transcription } from '../transcription/entities.js';
import { numbered } from '../transcription/transcripts/segments.js';
import { hourOfSpeech } from './transcription-cues.js';

/**
 * What translating a transcript adds (transcription/derived/), against the language-model fake answering at once:
 * a done job's transcript replaced by MINUTES of two speakers' speech with word times, translated into three
 * languages one after the other (each its own workflow: the snapshot, one activity per chunk of
 * TRANSLATION_CHUNK_LINES cues, the files). Reports the median time from the request to `done`, per minute of audio:
 * Gristmill's own cost, the model's thinking excluded.
 */
export async function translationCost(o: { url: string; orm: Orm; jobId: string; llm: FakeLlm; minutes?: number }): Promise<void> {
  const minutes = o.minutes ?? 10;
  const segments = numbered(hourOfSpeech(true, minutes * 60));
  await o.orm.em.fork().nativeUpdate(Transcription, { jobId: o.jobId }, { segmentsJson: JSON.stringify(segments), segmentCount: segments.length });
  const times: number[] = [];
  let requests = 0;
  for (const language of ['de', 'fr', 'es']) {
    const before = o.llm.requests.length;
    const t0 = performance.now();
    const res = await fetch(`${o.url}/api/jobs/${o.jobId}/translations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ language }) });
    if (res.status !== 202) throw new Error(`translation answered ${res.status}: ${await res.text()}`);
    for (;;) {
      const job = (await (await fetch(`${o.url}/api/jobs/${o.jobId}`)).json()) as { translations: { language: string; status: string; error: string | null }[] };
      const t = job.translations.find((x) => x.language === language);
      if (t?.status === 'done') break;
      if (t && ['failed', 'cancelled'].includes(t.status)) throw new Error(`translation ${t.status}: ${t.error}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    times.push(performance.now() - t0);
    requests = o.llm.requests.length - before;
  }
  const median = [...times].sort((a, b) => a - b)[1]!;
  console.log(
    `translation of ${minutes} min of speech (${segments.length} segments, ${requests} requests to the fake model a language): ` +
      `median ${median.toFixed(0)} ms, ${(median / minutes).toFixed(0)} ms per minute of audio (runs ${times.map((x) => x.toFixed(0)).join(', ')} ms)`,
  );
}
