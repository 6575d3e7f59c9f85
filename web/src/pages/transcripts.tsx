import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, DownloadLink, ErrorText, formatClock, formatDate, Notice, Progress, Section, messageOf, useAction, useLiveList } from '../components.js';
import { PushOptIn } from '../push.js';
import type { TranscriptionJob } from '../types.js';
import { TranscriptEditor } from './transcript-editor.js';
import { applyExtraEvent, TranscriptExtras } from './transcript-extras.js';

const ACTIVE = new Set(['pending', 'processing']);
const RETRYABLE = new Set(['failed', 'cancelled']);
const FORMATS = ['srt', 'vtt', 'txt', 'md', 'json'] as const;

/** Transcription: submit a link, upload a file or record from the microphone; follow jobs live; download results. */
export function TranscriptsPage() {
  /** Jobs seen finishing while the page was open: their transcript opens by itself. */
  const [justDone, setJustDone] = useState<Set<string>>(new Set());
  const live = useLiveList<TranscriptionJob>('/api/jobs?limit=30', '/api/jobs/events', (list, event, raw) => {
    const d = raw as Partial<TranscriptionJob> & { jobId?: string; message?: string };
    if (!d?.jobId) return;
    const id = d.jobId;
    if (event === 'status') {
      list.patch(id, (j) => ({ ...j, status: d.status ?? j.status, progress: d.progress ?? j.progress, stage: d.stage ?? j.stage, stageDetail: d.stageDetail ?? null, error: d.error ?? null }));
    } else if (event === 'done') {
      // The list's entry lacks files and segments: read the finished job.
      void api<TranscriptionJob>(`/api/jobs/${id}`).then((job) => {
        list.upsert(job);
        if (job.status === 'done') setJustDone((s) => new Set(s).add(id));
      }, () => void list.reload());
    } else if (event === 'extra') {
      // A translation or summary of job `jobId` moved (transcript-extras.tsx); once it ends, its files and text are read.
      const x = raw as Parameters<typeof applyExtraEvent>[1] & { jobId: string };
      if (['done', 'failed', 'cancelled'].includes(x.status ?? '')) void api<TranscriptionJob>(`/api/jobs/${id}`).then((job) => list.upsert(job), () => undefined);
      else list.patch(id, (j) => applyExtraEvent(j, x));
    }
  });
  const { items: jobs, loadError, streamProblem, upsert: replace } = live;

  return (
    <>
      <h1>Transcripts</h1>
      <p class="lead">Timed transcripts of videos, uploads and recordings.</p>
      <div class="columns">
        <FromLink onCreated={replace} />
        <FromFile onCreated={replace} />
        <Recorder onCreated={replace} />
      </div>
      <Section title="Jobs" id="jobs">
        <ErrorText error={loadError} />
        {streamProblem && !loadError && <Notice>{streamProblem}</Notice>}
        {jobs === null ? (
          !loadError && <p class="hint">Loading…</p>
        ) : jobs.length === 0 ? (
          <p class="hint">No transcripts yet.</p>
        ) : (
          <ul class="list">
            {jobs.map((j) => (
              <JobRow key={j.id} job={j} openTranscript={justDone.has(j.id)} onChanged={replace} />
            ))}
          </ul>
        )}
      </Section>
      <Section title="Push notifications" id="transcript-push">
        <PushOptIn />
      </Section>
    </>
  );
}

function ModeSelect({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  return (
    <label>
      Audio clean-up
      <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="auto">auto: measure, then choose</option>
        <option value="none">none</option>
        <option value="standard">standard: light denoise and loudness</option>
        <option value="aggressive">aggressive: noisy rooms, far speakers</option>
      </select>
    </label>
  );
}

type OnCreated = { onCreated: (job: TranscriptionJob) => void };

function FromLink({ onCreated }: OnCreated) {
  const [url, setUrl] = useState('');
  const [title, setTitle] = useState('');
  const [mode, setMode] = useState('auto');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      onCreated(await api<TranscriptionJob>('/api/jobs', { method: 'POST', body: { url: url.trim(), mode, ...(title.trim() && { title: title.trim() }) } }));
      setUrl('');
      setTitle('');
    });
  };
  return (
    <Section title="From a link" id="from-link">
      <form class="form" onSubmit={submit}>
        <label>
          Video page URL
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://www.youtube.com/watch?v=…" />
        </label>
        <label>
          Title <span class="optional">(optional)</span>
          <input value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <ModeSelect value={mode} onChange={setMode} />
        <button type="submit" disabled={action.busy}>
          Transcribe link
        </button>
        <ErrorText error={action.error} />
      </form>
    </Section>
  );
}

async function uploadJob(file: Blob, name: string, fields: { title: string; mode: string; source: 'upload' | 'recording' }): Promise<TranscriptionJob> {
  const form = new FormData();
  if (fields.title.trim()) form.set('title', fields.title.trim());
  form.set('mode', fields.mode);
  form.set('source', fields.source);
  form.set('file', file, name);
  return api<TranscriptionJob>('/api/jobs', { method: 'POST', body: form });
}

function FromFile({ onCreated }: OnCreated) {
  const [file, setFile] = useState<File | null>(null);
  const [title, setTitle] = useState('');
  const [mode, setMode] = useState('auto');
  const input = useRef<HTMLInputElement>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void action.run(async () => {
      onCreated(await uploadJob(file, file.name, { title, mode, source: 'upload' }));
      setFile(null);
      setTitle('');
      if (input.current) input.current.value = '';
    });
  };
  return (
    <Section title="Upload a file" id="from-file">
      <form class="form" onSubmit={submit}>
        <label>
          Audio or video file
          <input ref={input} type="file" required accept="audio/*,video/*" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <label>
          Title <span class="optional">(default: the file name)</span>
          <input value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <ModeSelect value={mode} onChange={setMode} />
        <button type="submit" disabled={action.busy || !file}>
          {action.busy ? 'Uploading…' : 'Upload and transcribe'}
        </button>
        <ErrorText error={action.error} />
      </form>
    </Section>
  );
}

/** The first container and codec this browser records; the server reads any of them. */
function recordingType(): string | undefined {
  return ['audio/webm;codecs=opus', 'audio/webm', 'audio/ogg;codecs=opus', 'audio/mp4'].find((t) => MediaRecorder.isTypeSupported(t));
}

function microphoneError(err: unknown): string {
  const name = (err as DOMException).name;
  if (name === 'NotAllowedError') return "Microphone access was denied: allow it in the browser's site settings and try again.";
  if (name === 'NotFoundError') return 'No microphone was found.';
  return `The microphone could not be started: ${messageOf(err)}`;
}

function Recorder({ onCreated }: OnCreated) {
  const [state, setState] = useState<'idle' | 'recording' | 'recorded'>('idle');
  const [seconds, setSeconds] = useState(0);
  const [take, setTake] = useState<{ blob: Blob; url: string } | null>(null);
  const [title, setTitle] = useState('');
  const [mode, setMode] = useState('auto');
  const recorder = useRef<MediaRecorder | null>(null);
  const timer = useRef<ReturnType<typeof setInterval> | undefined>(undefined);
  const action = useAction();
  const canRecord = typeof MediaRecorder !== 'undefined' && !!navigator.mediaDevices?.getUserMedia;

  const release = () => {
    clearInterval(timer.current);
    recorder.current?.stream.getTracks().forEach((t) => t.stop());
  };
  useEffect(() => release, []);

  const start = async () => {
    action.setError(null);
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      action.setError(microphoneError(err));
      return;
    }
    const type = recordingType();
    const rec = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
    const chunks: Blob[] = [];
    rec.ondataavailable = (e) => e.data.size && chunks.push(e.data);
    rec.onstop = () => {
      release();
      const blob = new Blob(chunks, { type: rec.mimeType || 'audio/webm' });
      setTake({ blob, url: URL.createObjectURL(blob) });
      setState('recorded');
    };
    recorder.current = rec;
    rec.start(500);
    const t0 = Date.now();
    setSeconds(0);
    timer.current = setInterval(() => setSeconds((Date.now() - t0) / 1000), 250);
    setState('recording');
  };
  const discard = () => {
    if (take) URL.revokeObjectURL(take.url);
    setTake(null);
    setState('idle');
  };
  const send = () =>
    action.run(async () => {
      if (!take) return;
      const ext = take.blob.type.includes('ogg') ? 'ogg' : take.blob.type.includes('mp4') ? 'm4a' : 'webm';
      const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
      onCreated(await uploadJob(take.blob, `recording-${stamp}.${ext}`, { title, mode, source: 'recording' }));
      setTitle('');
      discard();
    });

  return (
    <Section title="Record" id="record">
      {!canRecord ? (
        <Notice>Recording needs a browser with a microphone, over HTTPS (or localhost).</Notice>
      ) : state === 'idle' ? (
        <button type="button" onClick={start}>
          Start recording
        </button>
      ) : state === 'recording' ? (
        <div class="recording">
          <p role="status">
            <span class="dot" aria-hidden="true" /> Recording <span data-testid="record-time">{formatClock(seconds)}</span>
          </p>
          <button type="button" class="danger" onClick={() => recorder.current?.stop()}>
            Stop recording
          </button>
        </div>
      ) : (
        take && (
          <div class="form">
            <audio controls src={take.url} aria-label="The recording" />
            <label>
              Title <span class="optional">(default: Recording and the date)</span>
              <input value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
            </label>
            <ModeSelect value={mode} onChange={setMode} />
            <div class="actions">
              <button type="button" disabled={action.busy} onClick={send}>
                {action.busy ? 'Sending…' : 'Transcribe recording'}
              </button>
              <button type="button" class="secondary" disabled={action.busy} onClick={discard}>
                Discard
              </button>
            </div>
          </div>
        )
      )}
      <ErrorText error={action.error} />
    </Section>
  );
}

function JobRow({ job, openTranscript, onChanged }: { job: TranscriptionJob; openTranscript: boolean; onChanged: (j: TranscriptionJob) => void }) {
  const [segments, setSegments] = useState(job.segments ?? null);
  const action = useAction();
  const loadSegments = () => {
    if (!segments) void action.run(async () => setSegments((await api<TranscriptionJob>(`/api/jobs/${job.id}`)).segments ?? []));
  };
  useEffect(() => {
    if (job.segments) setSegments(job.segments);
  }, [job.segments]);
  useEffect(() => {
    // A job run again has none of its earlier run's transcript: until its `done` read brings the new one, it is loading
    // (its status event comes first), not an empty transcript.
    if (job.status !== 'done') setSegments(null);
  }, [job.status]);

  const source = job.source === 'url' ? job.sourceUrl : job.source === 'recording' ? 'recording' : job.fileName;
  return (
    <li class="item" data-job-id={job.id} data-status={job.status}>
      <div class="item-head">
        <h3>{job.title}</h3>
        <Badge status={job.status} />
      </div>
      <p class="meta">
        <span class="source">{source}</span> · {job.appliedMode ? `clean-up ${job.appliedMode}` : `mode ${job.mode}`}
        {job.transcript_source === 'captions' && ' · from captions'}
        {job.asrBackend && ` · ${job.asrBackend}${job.asrModel ? ` ${job.asrModel}` : ''}`} · {formatDate(job.createdAt)}
      </p>
      {ACTIVE.has(job.status) && (
        <div class="job">
          <Progress value={job.progress} label={`Transcribing ${job.title}`} />
          <span>
            {job.stage ?? job.status} · {job.progress}%
          </span>
          {job.stageDetail && <small class="hint">{job.stageDetail}</small>}
        </div>
      )}
      <ErrorText error={job.error} />
      {job.status === 'done' && (
        <>
          <div class="actions downloads" aria-label="Downloads">
            {FORMATS.map((f) => (
              <DownloadLink key={f} path={job.files?.[f] ?? `/api/jobs/${job.id}/files/${f}`}>
                {f.toUpperCase()}
              </DownloadLink>
            ))}
          </div>
          <details open={openTranscript} onToggle={(e) => e.currentTarget.open && loadSegments()}>
            <summary>Transcript{job.segmentCount != null && ` (${job.segmentCount} segment${job.segmentCount === 1 ? '' : 's'})`}</summary>
            {segments ? (
              <TranscriptEditor job={job} segments={segments} onSegments={setSegments} />
            ) : (
              <p class="hint">Loading…</p>
            )}
          </details>
          <TranscriptExtras job={job} onChanged={onChanged} />
        </>
      )}
      <div class="actions">
        {ACTIVE.has(job.status) && (
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Cancel ${job.title}`}
            onClick={() => action.run(async () => onChanged(await api<TranscriptionJob>(`/api/jobs/${job.id}`, { method: 'DELETE' })))}
          >
            Cancel
          </button>
        )}
        {RETRYABLE.has(job.status) && (
          <button
            type="button"
            disabled={action.busy}
            aria-label={`Retry ${job.title}`}
            onClick={() => action.run(async () => onChanged(await api<TranscriptionJob>(`/api/jobs/${job.id}/retry`, { method: 'POST' })))}
          >
            Retry
          </button>
        )}
      </div>
      <ErrorText error={action.error} />
    </li>
  );
}
