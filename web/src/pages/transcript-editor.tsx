import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiBlob, hasApiKey } from '../api.js';
import { ErrorText, formatClock, useAction } from '../components.js';
import type { TranscriptionJob, TranscriptSegment } from '../types.js';

/**
 * A finished job's transcript, to read, listen to and correct (docs/web.md, "Transcripts"): each segment plays the
 * job's audio from its start (GET /api/jobs/:id/audio), its text is edited in place (PATCH
 * /api/jobs/:id/segments/:segmentId), and speakers are renamed (PATCH /api/jobs/:id/speakers). The server writes
 * the files again after each change.
 */
export function TranscriptEditor({ job, segments, onSegments }: { job: TranscriptionJob; segments: TranscriptSegment[]; onSegments: (s: TranscriptSegment[]) => void }) {
  const audio = usePlayback(job);
  const speakers = [...new Set(segments.flatMap((s) => (s.speaker ? [s.speaker] : [])))];
  return (
    <div class="transcript-editor">
      {speakers.length > 0 && <SpeakerNames jobId={job.id} speakers={speakers} onSegments={onSegments} />}
      {audio.src && <audio ref={audio.ref} controls preload="metadata" src={audio.src} aria-label={`Audio of ${job.title}`} onError={audio.unavailable} />}
      <ErrorText error={audio.error} />
      <div class="transcript" data-testid="transcript">
        {segments.map((s) => (
          <SegmentRow
            key={s.id}
            jobId={job.id}
            segment={s}
            onPlay={audio.src ? () => audio.playFrom(s.start) : undefined}
            onSaved={(saved) => onSegments(segments.map((x) => (x.id === saved.id ? saved : x)))}
          />
        ))}
      </div>
    </div>
  );
}

/**
 * The job's audio element: its source is the route itself (the browser asks for ranges as it seeks), or, when an API
 * key is needed (an element's request cannot carry it), the file fetched once with the key.
 */
function usePlayback(job: TranscriptionJob) {
  const ref = useRef<HTMLAudioElement>(null);
  const [src, setSrc] = useState<string | null>(job.transcript_source === 'captions' ? null : hasApiKey() ? null : `/api/jobs/${job.id}/audio`);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<number | null>(null);
  useEffect(() => {
    if (job.transcript_source === 'captions' || !hasApiKey()) return;
    let url: string | undefined;
    apiBlob(`/api/jobs/${job.id}/audio`).then(
      (blob) => setSrc((url = URL.createObjectURL(blob))),
      () => setSrc(null),
    );
    return () => url && URL.revokeObjectURL(url);
  }, [job.id, job.transcript_source]);
  useEffect(() => {
    if (pending === null || !ref.current) return;
    const el = ref.current;
    el.currentTime = pending;
    setPending(null);
    el.play().catch((err: Error) => setError(`The audio could not be played: ${err.message}`));
  }, [pending]);
  return {
    ref,
    src,
    error,
    playFrom: (seconds: number) => setPending(seconds),
    // No copy of the audio (a job converted before it was kept): no play buttons.
    unavailable: () => setSrc(null),
  };
}

function SegmentRow({ jobId, segment, onPlay, onSaved }: { jobId: string; segment: TranscriptSegment; onPlay?: () => void; onSaved: (s: TranscriptSegment) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const action = useAction();
  const save = (e: Event) => {
    e.preventDefault();
    if (draft === null) return;
    void action.run(async () => {
      onSaved(await api<TranscriptSegment>(`/api/jobs/${jobId}/segments/${segment.id}`, { method: 'PATCH', body: { text: draft } }));
      setDraft(null);
    });
  };
  const at = formatClock(segment.start);
  return (
    <div class="segment" data-segment-id={segment.id}>
      {onPlay ? (
        <button type="button" class="time link-button" aria-label={`Play from ${at}`} onClick={onPlay}>
          ▶ {at}
        </button>
      ) : (
        <span class="time">{at}</span>
      )}{' '}
      {segment.speaker && <strong class="speaker">{segment.speaker}: </strong>}
      {draft === null ? (
        <>
          <span class="segment-text" title={segment.edit ? `Corrected; the backend said: ${segment.edit.originalText}` : undefined}>
            {segment.text}
          </span>
          {segment.edit && <small class="hint"> (corrected)</small>}{' '}
          <button type="button" class="link-button" aria-label={`Edit segment at ${at}`} onClick={() => setDraft(segment.text)}>
            Edit
          </button>
        </>
      ) : (
        <form class="segment-edit" onSubmit={save}>
          <textarea aria-label={`Text of the segment at ${at}`} value={draft} rows={2} maxLength={5000} onInput={(e) => setDraft(e.currentTarget.value)} />
          <button type="submit" disabled={action.busy || !draft.trim()}>
            Save
          </button>
          <button type="button" class="secondary" disabled={action.busy} onClick={() => setDraft(null)}>
            Cancel
          </button>
        </form>
      )}
      <ErrorText error={action.error} />
    </div>
  );
}

function SpeakerNames({ jobId, speakers, onSegments }: { jobId: string; speakers: string[]; onSegments: (s: TranscriptSegment[]) => void }) {
  const [names, setNames] = useState<Record<string, string>>({});
  const action = useAction();
  const changed = Object.fromEntries(Object.entries(names).filter(([k, v]) => v.trim() && v.trim() !== k && speakers.includes(k)).map(([k, v]) => [k, v.trim()]));
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const job = await api<TranscriptionJob>(`/api/jobs/${jobId}/speakers`, { method: 'PATCH', body: changed });
      onSegments(job.segments ?? []);
      setNames({});
    });
  };
  return (
    <form class="form speakers" onSubmit={save} aria-label="Speakers">
      <fieldset>
        <legend>Speakers</legend>
        {speakers.map((s) => (
          <label key={s}>
            {s}
            <input value={names[s] ?? s} onInput={(e) => setNames({ ...names, [s]: e.currentTarget.value })} aria-label={`Name of ${s}`} />
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={action.busy || Object.keys(changed).length === 0}>
        Rename speakers
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
