import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, DownloadLink, ErrorText, formatClock, Progress, useAction } from '../components.js';
import type { TranscriptExtra, TranscriptionJob } from '../types.js';

const ACTIVE = new Set(['pending', 'processing']);
const FORMATS = ['srt', 'vtt', 'txt', 'md', 'json'] as const;

/** An `extra` event (a translation's or summary's change) applied to its transcription job in the list. */
export function applyExtraEvent(job: TranscriptionJob, d: Partial<TranscriptExtra> & { extraId?: string }): TranscriptionJob {
  const change = (x: TranscriptExtra): TranscriptExtra => ({
    ...x,
    status: d.status ?? x.status,
    progress: d.progress ?? x.progress,
    stage: d.stage ?? x.stage,
    stageDetail: d.stageDetail ?? null,
    error: d.error ?? null,
  });
  if (d.task === 'summary') return job.summary && job.summary.id === d.extraId ? { ...job, summary: change(job.summary) } : job;
  return { ...job, translations: (job.translations ?? []).map((x) => (x.id === d.extraId ? change(x) : x)) };
}

function ExtraState({ extra, label }: { extra: TranscriptExtra; label: string }) {
  return (
    <>
      <Badge status={extra.status} />
      {ACTIVE.has(extra.status) && (
        <span class="job">
          <Progress value={extra.progress} label={label} /> {extra.progress}%{extra.stageDetail && <small class="hint"> {extra.stageDetail}</small>}
        </span>
      )}
      <ErrorText error={extra.error} />
    </>
  );
}

/**
 * A done transcript's translations and summary (docs/transcription.md, "Translations and summaries"): ask for a
 * translation into a language or for a summary, follow them, download their files, read the summary's chapters.
 */
export function TranscriptExtras({ job, onChanged }: { job: TranscriptionJob; onChanged: (j: TranscriptionJob) => void }) {
  const [language, setLanguage] = useState('');
  const action = useAction();
  const reload = async () => onChanged(await api<TranscriptionJob>(`/api/jobs/${job.id}`));
  const translate = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api(`/api/jobs/${job.id}/translations`, { method: 'POST', body: { language: language.trim() } });
      setLanguage('');
      await reload();
    });
  };
  const summarise = () => action.run(async () => {
    await api(`/api/jobs/${job.id}/summary`, { method: 'POST', body: {} });
    await reload();
  });
  const cancel = (x: TranscriptExtra) =>
    action.run(async () => {
      await api(x.task === 'summary' ? `/api/jobs/${job.id}/summary` : `/api/jobs/${job.id}/translations/${x.language}`, { method: 'DELETE' });
      await reload();
    });
  const summary = job.summary ?? null;
  return (
    <div class="extras" data-testid="transcript-extras">
      <h4>Translations</h4>
      {(job.translations ?? []).length > 0 && (
        <ul class="list" aria-label="Translations">
          {(job.translations ?? []).map((x) => (
            <li key={x.id} data-language={x.language} data-status={x.status}>
              <strong>{x.language}</strong> <ExtraState extra={x} label={`Translating into ${x.language}`} />
              {x.status === 'done' && (
                <span class="actions downloads" aria-label={`Downloads (${x.language})`}>
                  {FORMATS.map((f) => (
                    <DownloadLink key={f} path={x.files?.[f] ?? `/api/jobs/${job.id}/files/${f}?language=${x.language}`}>
                      {f.toUpperCase()}
                    </DownloadLink>
                  ))}
                </span>
              )}
              {ACTIVE.has(x.status) && (
                <button type="button" class="secondary" disabled={action.busy} onClick={() => cancel(x)}>
                  Cancel
                </button>
              )}
              {(x.status === 'failed' || x.status === 'cancelled') && (
                <button type="button" class="secondary" disabled={action.busy} onClick={() => action.run(async () => {
                  await api(`/api/jobs/${job.id}/translations`, { method: 'POST', body: { language: x.language } });
                  await reload();
                })}>
                  Try again
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <form class="form inline" onSubmit={translate}>
        <label>
          Translate into <span class="optional">(a language tag: de, fr, pt-BR)</span>
          <input value={language} required onInput={(e) => setLanguage(e.currentTarget.value)} placeholder="de" />
        </label>
        <button type="submit" disabled={action.busy || !language.trim()}>
          Translate
        </button>
      </form>
      <h4>Summary</h4>
      {summary ? (
        <div data-testid="summary" data-status={summary.status}>
          <ExtraState extra={summary} label="Summarising" />
          {ACTIVE.has(summary.status) && (
            <button type="button" class="secondary" disabled={action.busy} onClick={() => cancel(summary)}>
              Cancel
            </button>
          )}
          {(summary.status === 'failed' || summary.status === 'cancelled') && (
            <button type="button" class="secondary" disabled={action.busy} onClick={summarise}>
              Try again
            </button>
          )}
          {summary.summary && (
            <>
              <p>{summary.summary.summary}</p>
              <ol class="chapters">
                {summary.summary.chapters.map((c) => (
                  <li key={c.start}>
                    <span class="time">{formatClock(c.start)}</span> <strong>{c.title}</strong>
                    {c.summary && `: ${c.summary}`}
                  </li>
                ))}
              </ol>
              <div class="actions downloads" aria-label="Summary downloads">
                <DownloadLink path={`/api/jobs/${job.id}/summary/md`}>Summary MD</DownloadLink>
                <DownloadLink path={`/api/jobs/${job.id}/summary/json`}>Summary JSON</DownloadLink>
              </div>
            </>
          )}
        </div>
      ) : (
        <button type="button" disabled={action.busy} onClick={summarise}>
          Summarise with chapters
        </button>
      )}
      <ErrorText error={action.error} />
    </div>
  );
}
