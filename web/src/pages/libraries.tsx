import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, ConfirmDialog, CopyButton, ErrorText, formatDate, Link, Notice, Progress, Section, messageOf, useAction, useStream } from '../components.js';
import { httpUrl, isPackage, refreshSummary, sourceKind, sourceNoun } from '../sources.js';
import type { IndexBroadcast, IndexJob, Library, Version } from '../types.js';
import { AddLibrary } from './add-library.js';
import { LockfilePanel } from './lockfile.js';
import { RefreshPanel } from './refresh-schedule.js';

const enc = encodeURIComponent;
const ACTIVE = new Set(['queued', 'running']);

/** Jobs by what they index: the library id for its default branch, the version id for a version. */
type JobsByTarget = Map<string, IndexJob>;
const targetOf = (j: { repositoryId: string; versionId: string | null }) => j.versionId ?? j.repositoryId;

/** The libraries page: the list with live indexing progress, adding, versions, re-indexing and deleting. */
export function LibrariesPage() {
  const [libraries, setLibraries] = useState<Library[] | null>(null);
  const [jobs, setJobs] = useState<JobsByTarget>(new Map());
  const [loadError, setLoadError] = useState<string | null>(null);
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const reload = async () => {
    try {
      const [libs, recent] = await Promise.all([
        api<{ libraries: Library[] }>('/api/v1/libs?limit=200'),
        api<{ jobs: IndexJob[] }>('/api/v1/jobs?limit=200'),
      ]);
      setLibraries(libs.libraries);
      // Newest first: the first job seen for a target is its latest.
      const latest: JobsByTarget = new Map();
      for (const j of recent.jobs) if (!latest.has(targetOf(j))) latest.set(targetOf(j), j);
      setJobs(latest);
      setLoadError(null);
    } catch (err) {
      setLoadError(messageOf(err));
    }
  };
  // Status changes move library states and counts: reload once the burst is over.
  const reloadSoon = () => {
    clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(() => void reload(), 250);
  };

  // Loaded at once, and again whenever the stream (re)connects, so nothing that happened in between is missed.
  useEffect(() => void reload(), []);
  const streamProblem = useStream('/api/v1/jobs/stream', {
    onOpen: () => void reload(),
    onEvent: (_event, raw) => {
      const m = raw as IndexBroadcast;
      if (!m?.jobId) return;
      setJobs((prev) => {
        const next = new Map(prev);
        const key = targetOf(m);
        const before = prev.get(key);
        const base = before?.id === m.jobId ? before : ({ id: m.jobId, repositoryId: m.repositoryId, versionId: m.versionId } as IndexJob);
        next.set(key, { ...base, ...m.data, id: m.jobId, repositoryId: m.repositoryId, versionId: m.versionId });
        return next;
      });
      if (m.event === 'status') reloadSoon();
    },
  });
  useEffect(() => () => clearTimeout(reloadTimer.current), []);

  return (
    <>
      <h1>Libraries</h1>
      <p class="lead">Repositories, packages and documentation sites indexed into documentation snippets for coding assistants.</p>
      <AddLibrary onAdded={reload} />
      <Section title="Indexed libraries" id="library-list">
        <ErrorText error={loadError} />
        {streamProblem && !loadError && <Notice>{streamProblem}</Notice>}
        {libraries === null ? (
          !loadError && <p class="hint">Loading…</p>
        ) : libraries.length === 0 ? (
          <p class="hint">No libraries yet: add one above.</p>
        ) : (
          <LibraryList libraries={libraries} jobs={jobs} onChanged={reload} />
        )}
      </Section>
      <LockfilePanel onIndexed={reload} />
    </>
  );
}

type Shown = 'all' | 'on-demand' | 'by-hand';

/** The list, filtered by who registered a library (the list API has no such filter: it is done here). */
function LibraryList({ libraries, jobs, onChanged }: { libraries: Library[]; jobs: JobsByTarget; onChanged: () => Promise<void> }) {
  const [shown, setShown] = useState<Shown>('all');
  const onDemand = libraries.filter((l) => l.onDemand).length;
  const visible = libraries.filter((l) => shown === 'all' || (shown === 'on-demand') === Boolean(l.onDemand));
  return (
    <>
      <label class="list-filter">
        Show
        <select value={shown} onChange={(e) => setShown(e.currentTarget.value as Shown)}>
          <option value="all">All libraries ({libraries.length})</option>
          <option value="on-demand">Registered on demand by a search ({onDemand})</option>
          <option value="by-hand">Registered by hand ({libraries.length - onDemand})</option>
        </select>
      </label>
      {visible.length === 0 ? (
        <p class="hint">No library here{shown === 'on-demand' ? ': none was registered by a search yet.' : '.'}</p>
      ) : (
        <ul class="list">
          {visible.map((lib) => (
            <LibraryRow key={lib.id} lib={lib} jobs={jobs} onChanged={onChanged} />
          ))}
        </ul>
      )}
    </>
  );
}

/** Where a library comes from: its kind and source, and for a package its version and repository. */
function SourceLine({ lib }: { lib: Library }) {
  const repository = httpUrl(lib.repositoryUrl);
  return (
    <p class="meta">
      <code>{lib.id}</code> · <span data-testid="source-kind">{sourceKind(lib.source)}</span> <span class="source">{lib.sourceUrl}</span>
      {isPackage(lib.source) && lib.latestVersion && (
        <>
          {' '}
          · version <span data-testid="package-version">{lib.latestVersion}</span>
        </>
      )}
      {lib.repositoryUrl && (
        <>
          {' '}
          · repository{' '}
          {repository ? (
            <a href={repository} rel="noopener noreferrer" target="_blank" class="source">
              {repository}
            </a>
          ) : (
            <span class="source">{lib.repositoryUrl}</span>
          )}
        </>
      )}
      {lib.hasGitHostToken && ' · token set'}
    </p>
  );
}

/** A job's progress line, or its failure. */
function JobLine({ job, what }: { job: IndexJob | undefined; what: string }) {
  if (!job) return null;
  if (ACTIVE.has(job.status)) {
    const files =
      job.stage === 'embedding' && job.snippetsToEmbed
        ? ` · ${job.embeddedSnippets ?? 0}/${job.snippetsToEmbed} snippets embedded`
        : job.totalFiles
          ? ` · ${job.processedFiles}/${job.totalFiles} files`
          : '';
    return (
      <div class="job" data-testid="job-progress">
        <Progress value={job.progress} label={`Indexing ${what}`} />
        <span>
          {job.status === 'queued' ? 'queued' : job.stage} · {job.progress}%{files}
        </span>
        {job.stageDetail && <small class="hint">{job.stageDetail}</small>}
      </div>
    );
  }
  if (job.status === 'failed' && job.error) return <ErrorText error={`Last indexing failed at ${job.stage}: ${job.error}`} />;
  return null;
}

function LibraryRow({ lib, jobs, onChanged }: { lib: Library; jobs: JobsByTarget; onChanged: () => Promise<void> }) {
  const [open, setOpen] = useState<'versions' | 'schedule' | null>(null);
  const action = useAction();
  const job = jobs.get(lib.id);
  const busy = action.busy || (job !== undefined && ACTIVE.has(job.status));
  const toggle = (panel: 'versions' | 'schedule') => setOpen(open === panel ? null : panel);

  return (
    <li class="item" data-library-id={lib.id} data-state={lib.state} data-on-demand={lib.onDemand ? 'true' : undefined}>
      <div class="item-head">
        <h3>{lib.title}</h3>
        <Badge status={lib.state} />
        {lib.onDemand && <Badge status="on_demand" />}
      </div>
      <SourceLine lib={lib} />
      <p class="counts">
        <span data-testid="snippet-count">{lib.totalSnippets} snippets</span> · {lib.embeddingCount} embeddings · trust {lib.trustScore.toFixed(1)} ·
        indexed {formatDate(lib.lastIndexedAt)}
        {lib.versions.length > 0 && ` · versions: ${lib.versions.join(', ')}`} · <span data-testid="refresh-summary">{refreshSummary(lib)}</span>
      </p>
      <JobLine job={job} what={lib.id} />
      <div class="actions">
        <button
          type="button"
          disabled={busy}
          aria-label={`${lib.lastIndexedAt ? 'Re-index' : 'Index'} ${lib.id}`}
          onClick={() => action.run(async () => (await api(`/api/v1/libs/${enc(lib.id)}/index`, { method: 'POST' }), await onChanged()))}
        >
          {lib.lastIndexedAt ? 'Re-index' : 'Index'}
        </button>
        {lib.source !== 'website' && (
          <button type="button" class="secondary" aria-expanded={open === 'versions'} aria-label={`Versions of ${lib.id}`} onClick={() => toggle('versions')}>
            Versions
          </button>
        )}
        <button type="button" class="secondary" aria-expanded={open === 'schedule'} aria-label={`Refresh schedule of ${lib.id}`} onClick={() => toggle('schedule')}>
          Schedule
        </button>
        <Link href={`/search?library=${enc(lib.id)}`} class="button secondary" label={`Search ${lib.id}`}>
          Search
        </Link>
        <CopyButton text={lib.id} label="Copy id" />
        <DeleteButton lib={lib} onDelete={() => action.run(async () => (await api(`/api/v1/libs/${enc(lib.id)}`, { method: 'DELETE' }), await onChanged()))} />
      </div>
      <ErrorText error={action.error} />
      {open === 'versions' && <Versions lib={lib} jobs={jobs} onChanged={onChanged} />}
      {open === 'schedule' && <RefreshPanel lib={lib} onChanged={onChanged} />}
    </li>
  );
}

function DeleteButton({ lib, onDelete }: { lib: Library; onDelete: () => void }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <button type="button" class="danger" aria-label={`Delete ${lib.id}`} onClick={() => setConfirming(true)}>
        Delete
      </button>
      <ConfirmDialog
        open={confirming}
        title={`Delete ${lib.id}?`}
        confirmLabel="Delete library"
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false);
          onDelete();
        }}
      >
        <p>
          Its versions, documents, snippets and embeddings are removed, its running jobs cancelled and its refresh schedule deleted. The {sourceNoun(lib.source)} itself is not
          touched.
        </p>
      </ConfirmDialog>
    </>
  );
}

function Versions({ lib, jobs, onChanged }: { lib: Library; jobs: JobsByTarget; onChanged: () => Promise<void> }) {
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [tag, setTag] = useState('');
  const [discovered, setDiscovered] = useState<string[] | null>(null);
  const action = useAction();
  const base = `/api/v1/libs/${enc(lib.id)}/versions`;

  const load = async () => setVersions((await api<{ versions: Version[] }>(base)).versions);
  // Reload when a version's job finishes (its state and counts change).
  const finished = lib.versions.map((t) => jobs.get(`${lib.id}/${t}`)?.status ?? '').join();
  useEffect(() => {
    void action.run(load);
  }, [lib.id, finished]);

  const add = (t: string) =>
    action.run(async () => {
      await api(base, { method: 'POST', body: { tag: t.trim(), autoIndex: true } });
      setTag('');
      await Promise.all([load(), onChanged()]);
    });
  const discover = () =>
    action.run(async () => {
      const { tags } = await api<{ tags: string[] }>(`${base}/discover`, { method: 'POST' });
      setDiscovered(tags);
    });
  const unregistered = (discovered ?? []).filter((t) => !versions?.some((v) => v.tag === t));

  return (
    <div class="versions">
      <h4>Versions of {lib.id}</h4>
      {versions && versions.length > 0 ? (
        <ul class="list compact">
          {versions.map((v) => (
            <li key={v.id} class="item" data-version-id={v.id}>
              <div class="item-head">
                <strong>{v.tag}</strong>
                <Badge status={v.state} />
              </div>
              <p class="counts">
                {v.totalSnippets} snippets · indexed {formatDate(v.indexedAt)}
                {v.commitHash && (
                  <>
                    {' '}
                    · <code>{v.commitHash.slice(0, 10)}</code>
                  </>
                )}
              </p>
              <JobLine job={jobs.get(v.id)} what={v.id} />
              <div class="actions">
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  aria-label={`Index ${v.tag}`}
                  onClick={() => action.run(async () => (await api(`${base}/${enc(v.tag)}/index`, { method: 'POST' }), await load()))}
                >
                  Index
                </button>
                <button type="button" class="danger" disabled={action.busy} onClick={() => action.run(async () => (await api(`${base}/${enc(v.tag)}`, { method: 'DELETE' }), await Promise.all([load(), onChanged()])))}>
                  Delete {v.tag}
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : (
        versions && <p class="hint">No versions registered: {isPackage(lib.source) ? `the latest only${lib.latestVersion ? ` (${lib.latestVersion})` : ''}` : 'the default branch only'}.</p>
      )}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void add(tag);
        }}
      >
        <label>
          Tag
          <input required value={tag} onInput={(e) => setTag(e.currentTarget.value)} placeholder={isPackage(lib.source) ? '5.2.0' : 'v1.2.0'} spellcheck={false} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add and index
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={discover}>
          Discover tags
        </button>
      </form>
      {discovered &&
        (lib.source !== 'local' ? (
          <p class="hint">
            {isPackage(lib.source)
              ? "Tags are discovered for local folders only; type one of the package's published versions instead."
              : 'Tags are discovered for local folders only; type a tag of the remote repository instead.'}
          </p>
        ) : unregistered.length ? (
          <div class="chips" aria-label="Tags found in the repository">
            {unregistered.map((t) => (
              <button key={t} type="button" class="chip" onClick={() => add(t)} aria-label={`Add version ${t}`}>
                + {t}
              </button>
            ))}
          </div>
        ) : (
          <p class="hint">Every tag of the repository is registered.</p>
        ))}
      <ErrorText error={action.error} />
    </div>
  );
}
