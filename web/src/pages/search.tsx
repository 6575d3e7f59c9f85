import { useEffect, useState } from 'preact/hooks';
import { api, apiText } from '../api.js';
import { Badge, CopyButton, ErrorText, Notice, Section, messageOf, useAction } from '../components.js';
import { navigate } from '../router.js';
import { FindLibrary } from './find-library.js';
import { isPackage } from '../sources.js';
import type { ContextResult, Library } from '../types.js';

const MODES = ['auto', 'keyword', 'semantic', 'hybrid'] as const;
const MAIN = 'main';

interface Query {
  library: string;
  version: string;
  q: string;
  mode: string;
  alpha: string;
  tokens: string;
}

/** What the library's default scope is: a repository's branch, a package's latest version, a site as last read. */
function defaultScope(lib: Library | undefined): string {
  if (lib?.source === 'website') return 'the site';
  if (lib && isPackage(lib.source)) return lib.latestVersion ? `latest (${lib.latestVersion})` : 'latest';
  return 'default branch';
}

/** The library id the context endpoint takes: `/owner/repo`, or `/owner/repo/<tag>` for a version. */
const libraryIdOf = (q: Query) => (q.version && q.version !== MAIN ? `${q.library}/${q.version}` : q.library);

function contextPath(q: Query, type: 'json' | 'txt'): string {
  const p = new URLSearchParams({ libraryId: libraryIdOf(q), query: q.q, searchMode: q.mode, alpha: q.alpha, tokens: q.tokens, type });
  return `/api/v1/context?${p}`;
}

function fromLocation(): Query {
  const p = new URLSearchParams(location.search);
  return {
    library: p.get('library') ?? '',
    version: p.get('version') ?? MAIN,
    q: p.get('q') ?? '',
    mode: p.get('mode') ?? 'auto',
    alpha: p.get('alpha') ?? '0.5',
    tokens: p.get('tokens') ?? '10000',
  };
}

/** The search playground: GET /api/v1/context with every knob, results as the API returns them, and the txt view. */
export function SearchPage() {
  const [libraries, setLibraries] = useState<Library[]>([]);
  const [query, setQuery] = useState<Query>(fromLocation);
  const [result, setResult] = useState<{ q: Query; json: ContextResult } | null>(null);
  const [text, setText] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const action = useAction();
  const set = (patch: Partial<Query>) => setQuery((q) => ({ ...q, ...patch }));

  const loadLibraries = (select?: string) =>
    api<{ libraries: Library[] }>('/api/v1/libs?limit=200').then(
      ({ libraries: libs }) => {
        setLibraries(libs);
        setQuery((q) => (select ? { ...q, library: select, version: MAIN } : q.library || !libs[0] ? q : { ...q, library: libs[0].id }));
      },
      (err) => setLoadError(messageOf(err)),
    );
  useEffect(() => {
    void loadLibraries();
    // A shared link (?q=...) runs at once.
    const initial = fromLocation();
    if (initial.library && initial.q) void search(initial);
  }, []);

  const search = (q: Query) =>
    action.run(async () => {
      setText(null);
      navigate(`/search?${new URLSearchParams({ ...q })}`, { replace: true });
      setResult({ q, json: await api<ContextResult>(contextPath(q, 'json')) });
    });
  const showText = () =>
    action.run(async () => {
      if (result) setText(await apiText(contextPath(result.q, 'txt')));
    });

  const lib = libraries.find((l) => l.id === query.library);
  const versions = [MAIN, ...(lib?.indexedVersions.filter((v) => v !== MAIN) ?? []), ...(lib?.versions.filter((v) => !lib.indexedVersions.includes(v)) ?? [])];
  const alphaMatters = query.mode === 'hybrid' || query.mode === 'auto';

  return (
    <>
      <h1>Search</h1>
      <p class="lead">Try the context endpoint that coding assistants call.</p>
      <Section title="Query" id="query">
        <ErrorText error={loadError} />
        {/* A library found (or registered on demand) by name joins the list, chosen. */}
        <FindLibrary onFound={(l) => void loadLibraries(l.id)} />
        <form
          class="form grid"
          onSubmit={(e) => {
            e.preventDefault();
            void search(query);
          }}
        >
          <label>
            Library
            <select required value={query.library} onChange={(e) => set({ library: e.currentTarget.value, version: MAIN })}>
              {!lib && <option value={query.library}>{query.library || 'Choose a library'}</option>}
              {libraries.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.title} ({l.id}) · {l.state}
                  {l.onDemand ? ' · on demand' : ''}
                </option>
              ))}
            </select>
          </label>
          <label>
            Version
            <select value={query.version} onChange={(e) => set({ version: e.currentTarget.value })}>
              {versions.map((v) => (
                <option key={v} value={v}>
                  {v === MAIN ? defaultScope(lib) : v}
                </option>
              ))}
            </select>
          </label>
          <label class="wide">
            Query
            <input type="search" required value={query.q} onInput={(e) => set({ q: e.currentTarget.value })} placeholder="How do I render a widget?" />
          </label>
          <label>
            Mode
            <select value={query.mode} onChange={(e) => set({ mode: e.currentTarget.value })}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label>
            Alpha: <output>{Number(query.alpha).toFixed(2)}</output>
            <input type="range" min={0} max={1} step={0.05} value={query.alpha} disabled={!alphaMatters} onInput={(e) => set({ alpha: e.currentTarget.value })} aria-describedby="alpha-hint" />
            <span class="hint" id="alpha-hint">
              Hybrid weighting: 0 keyword only, 1 semantic only.
            </span>
          </label>
          <label>
            Token budget
            <input type="number" min={1} step={1} value={query.tokens} onInput={(e) => set({ tokens: e.currentTarget.value })} />
          </label>
          <div class="actions wide">
            <button type="submit" disabled={action.busy}>
              {action.busy ? 'Searching…' : 'Search'}
            </button>
            {query.library && <CopyButton text={libraryIdOf(query)} label="Copy library id" />}
          </div>
        </form>
        <ErrorText error={action.error} />
      </Section>
      {result && (
        <Section title="Results" id="results">
          <Notice>
            <span data-testid="result-count">{result.json.resultCount}</span> results from {result.json.repository.title}
            {result.json.version ? ` ${result.json.version.resolved}` : ''} · mode <strong>{result.json.searchMode}</strong>
          </Notice>
          <div class="actions">
            <button type="button" class="secondary" onClick={text === null ? showText : () => setText(null)} aria-expanded={text !== null}>
              {text === null ? 'Show as text' : 'Show results'}
            </button>
            <a class="button secondary" href={contextPath(result.q, 'txt')} target="_blank" rel="noopener">
              Open text view
            </a>
          </div>
          {result.json.rules.length > 0 && (
            <div class="rules">
              <h3>Rules</h3>
              <ul>
                {result.json.rules.map((r) => (
                  <li key={r}>{r}</li>
                ))}
              </ul>
            </div>
          )}
          {text !== null ? (
            <pre class="text-view" data-testid="text-view">
              {text}
            </pre>
          ) : (
            <ol class="results">
              {result.json.snippets.map((s) => (
                <li key={s.id} class="snippet">
                  <div class="item-head">
                    <Badge status={s.type} />
                    <strong>{s.title ?? s.filePath}</strong>
                  </div>
                  <p class="meta">
                    {s.breadcrumb && <span class="breadcrumb">{s.breadcrumb}</span>} <span class="source">{s.filePath}</span>
                    {s.language && <span class="lang"> · {s.language}</span>} · {s.tokenCount} tokens
                  </p>
                  <pre class={s.type}>
                    <code>{s.content}</code>
                  </pre>
                </li>
              ))}
            </ol>
          )}
        </Section>
      )}
    </>
  );
}
