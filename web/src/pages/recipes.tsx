import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, DownloadLink, ErrorText, formatDate, Notice, Section, useAction, useLiveList } from '../components.js';
import { PushOptIn } from '../push.js';
import { navigate } from '../router.js';
import { extractSharedUrl } from '../share.js';
import type { Phase, QueueItem, QueueUpdate } from '../types.js';

const RETRYABLE = new Set(['error', 'unhealthy']);
const PHASE_LABELS: Record<string, string> = { extraction: 'Read the post', parsing: 'Understand the recipe', uploading: 'Save to the recipe manager' };
const STEP_LABELS: Record<string, string> = { speech: "The video's speech", pictures: 'Pictures and frames' };

/**
 * The recipe queue: submit a post's link (typed, or shared from a phone through the manifest's share target at
 * /recipes/share), follow every item's phases live, retry failures, open the imported recipe.
 */
export function RecipesPage({ share }: { share?: boolean }) {
  const queue = useLiveList<QueueItem>('/api/queue?limit=30', '/api/queue/stream', (list, event, raw) => {
    if (event !== 'queue-update') return;
    const u = raw as QueueUpdate;
    list.patch(u.itemId, (i) => {
      // An update carries the item's status, phases and error; results only as phases complete, and a run that
      // starts again (pending) starts with none.
      const results = u.results ?? (u.status === 'pending' ? undefined : i.results);
      return { ...i, status: u.status, phases: u.progress ?? i.phases, results, error: u.error };
    });
  });
  const { items, loadError, streamProblem, upsert } = queue;

  return (
    <>
      <h1>Recipes</h1>
      <p class="lead">Turn a social-media post into a recipe in your recipe manager.</p>
      <Submit share={share} onQueued={upsert} />
      <Section title="Queue" id="queue">
        <ErrorText error={loadError} />
        {streamProblem && !loadError && <Notice>{streamProblem}</Notice>}
        {items === null ? (
          !loadError && <p class="hint">Loading…</p>
        ) : items.length === 0 ? (
          <p class="hint">Nothing queued yet.</p>
        ) : (
          <ul class="list">
            {items.map((item) => (
              <Item key={item.id} item={item} onChanged={upsert} />
            ))}
          </ul>
        )}
      </Section>
      <Section title="Push notifications" id="recipe-push">
        <PushOptIn />
      </Section>
    </>
  );
}

function Submit({ share, onQueued }: { share?: boolean; onQueued: (item: QueueItem) => void }) {
  const [url, setUrl] = useState('');
  const [queued, setQueued] = useState<string | null>(null);
  const action = useAction();

  const queue = (link: string) =>
    action.run(async () => {
      setQueued(null);
      const res = await api<QueueItem>('/api/queue', { method: 'POST', body: { url: link.trim() } });
      onQueued(res);
      setUrl('');
      setQueued(`Queued ${res.url}`);
    });

  // A share from a phone: take the link out of what was shared and queue it at once.
  useEffect(() => {
    if (!share) return;
    const p = new URLSearchParams(location.search);
    const link = extractSharedUrl({ url: p.get('url'), text: p.get('text'), title: p.get('title') });
    navigate('/recipes', { replace: true });
    if (link) void queue(link);
    else {
      setUrl(p.get('text') ?? p.get('url') ?? '');
      action.setError('The shared item has no link in it: paste the post’s link below.');
    }
  }, [share]);

  return (
    <Section title="Add a post" id="add-post">
      <form
        class="form inline"
        onSubmit={(e) => {
          e.preventDefault();
          void queue(url);
        }}
      >
        <label>
          Post URL
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://www.instagram.com/p/…" />
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Queueing…' : 'Queue'}
        </button>
      </form>
      <p class="hint">On a phone, install this app and share a post to it: it lands here.</p>
      <ErrorText error={action.error} />
      {queued && <Notice>{queued}</Notice>}
    </Section>
  );
}

function Item({ item, onChanged }: { item: QueueItem; onChanged: (i: QueueItem) => void }) {
  const action = useAction();
  const name = item.results?.recipe?.name;
  const link = item.results?.recipeManagerUrl;
  // A post with several recipes lists each, with its link once uploaded.
  const several = (item.results?.recipes?.length ?? 0) > 1 ? item.results!.recipes! : undefined;
  // The transcript of the video's speech once its step is done (the Transcripts page lists its job too).
  const speech = item.phases.find((p) => p.name === 'extraction')?.steps?.find((s) => s.name === 'speech');
  const transcript = speech?.status === 'completed' ? item.results?.transcriptionJobId : undefined;
  return (
    <li class="item" data-item-id={item.id} data-status={item.status}>
      <div class="item-head">
        {item.results?.thumbnail && <img class="thumb" src={item.results.thumbnail} alt="" loading="lazy" referrerpolicy="no-referrer" />}
        <h3>{several ? `${several.length} recipes` : (name ?? 'Recipe post')}</h3>
        <Badge status={item.status} />
      </div>
      <p class="meta">
        <a href={item.url} target="_blank" rel="noopener noreferrer" class="source">
          {item.url}
        </a>{' '}
        · {formatDate(item.createdAt)}
        {item.runs > 1 && ` · run ${item.runs}`}
      </p>
      <ol class="phases" aria-label="Phases">
        {item.phases.map((p) => (
          <li key={p.name} data-status={p.status}>
            <span class="phase-name">{PHASE_LABELS[p.name] ?? p.name}</span> <Badge status={p.status} />
            {(p.attempts ?? 0) > 1 && <small> attempt {p.attempts}</small>}
            {p.steps?.length ? <Steps phase={p} /> : null}
          </li>
        ))}
      </ol>
      {several && (
        <ul class="recipes" aria-label="Recipes" data-testid="recipe-list">
          {several.map((e, i) => (
            <li key={i}>
              {e.recipeManagerUrl ? (
                <a href={e.recipeManagerUrl} target="_blank" rel="noopener">
                  {e.recipe.name ?? `Recipe ${i + 1}`}
                </a>
              ) : (
                (e.recipe.name ?? `Recipe ${i + 1}`)
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={item.error} />
      <div class="actions">
        {link && (
          <a class="button" href={link} target="_blank" rel="noopener" data-testid="recipe-link">
            Open in recipe manager
          </a>
        )}
        {transcript && <DownloadLink path={`/api/jobs/${transcript}/files/txt`}>Transcript of the video</DownloadLink>}
        {RETRYABLE.has(item.status) && (
          <button
            type="button"
            disabled={action.busy}
            aria-label={`Retry ${item.url}`}
            onClick={() => action.run(async () => onChanged((await api<{ item: QueueItem }>(`/api/queue/${item.id}/retry`, { method: 'POST' })).item))}
          >
            Retry
          </button>
        )}
      </div>
      <ErrorText error={action.error} />
    </li>
  );
}

/** A phase's optional steps (the video's speech, the pictures sent to the model): what each did, or why not. */
function Steps({ phase }: { phase: Phase }) {
  return (
    <ul class="steps" aria-label={`Steps of ${PHASE_LABELS[phase.name] ?? phase.name}`}>
      {phase.steps!.map((s) => (
        <li key={s.name} data-step={s.name} data-status={s.status}>
          <span class="step-name">{STEP_LABELS[s.name] ?? s.name}</span> <Badge status={s.status} />
          {s.detail && <small class="hint step-detail">{s.detail}</small>}
        </li>
      ))}
    </ul>
  );
}
