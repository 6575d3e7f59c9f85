import { useEffect, useState } from 'preact/hooks';
import { api, apiKey } from '../api.js';
import { Badge, ErrorText, Notice, Section, messageOf, useAction } from '../components.js';
import { PushOptIn } from '../push.js';
import type { EmbeddingPreset, EmbeddingProfile } from '../types.js';

/** Settings: this browser's API key, indexing concurrency, embedding profiles, push notifications. */
export function SettingsPage() {
  return (
    <>
      <h1>Settings</h1>
      <ApiKey />
      <Concurrency />
      <Embeddings />
      <Section title="Push notifications" id="notifications">
        <PushOptIn />
      </Section>
    </>
  );
}

function ApiKey() {
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState(apiKey.get() !== '');
  const [note, setNote] = useState<string | null>(null);
  return (
    <Section title="API key" id="api-key">
      <p class="hint">
        Needed when the server sets API_KEY. It is kept in this browser only and sent with every request; it is never
        shown again.
      </p>
      <form
        class="form inline"
        onSubmit={(e) => {
          e.preventDefault();
          apiKey.set(value);
          setSaved(value.trim() !== '');
          setValue('');
          setNote(value.trim() ? 'Saved.' : 'Nothing to save.');
        }}
      >
        <label>
          API key
          <input type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} placeholder={saved ? 'A key is saved' : ''} />
        </label>
        <button type="submit">Save key</button>
        {saved && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              apiKey.clear();
              setSaved(false);
              setNote('Forgotten.');
            }}
          >
            Forget key
          </button>
        )}
      </form>
      {note && <Notice>{note}</Notice>}
    </Section>
  );
}

function Concurrency() {
  const [value, setValue] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    void action.run(async () => setValue(String((await api<{ concurrency: number }>('/api/v1/settings/indexing')).concurrency)));
  }, []);
  return (
    <Section title="Indexing" id="indexing">
      <form
        class="form inline"
        onSubmit={(e) => {
          e.preventDefault();
          setNote(null);
          void action.run(async () => {
            const { concurrency } = await api<{ concurrency: number }>('/api/v1/settings/indexing', { method: 'PUT', body: { concurrency: Number(value) } });
            setValue(String(concurrency));
            setNote(`Saved: up to ${concurrency} indexing job${concurrency === 1 ? '' : 's'} at once.`);
          });
        }}
      >
        <label>
          Jobs at once
          <input type="number" min={1} step={1} required value={value} onInput={(e) => setValue(e.currentTarget.value)} aria-describedby="concurrency-hint" />
        </label>
        <button type="submit" disabled={action.busy}>
          Save
        </button>
      </form>
      <p class="hint" id="concurrency-hint">
        The server keeps it between 1 and one less than its CPU count; a change applies at once.
      </p>
      <ErrorText error={action.error} />
      {note && <Notice>{note}</Notice>}
    </Section>
  );
}

interface Settings {
  activeProfileId: string | null;
  profiles: EmbeddingProfile[];
  presets: EmbeddingPreset[];
}

/** A profile being edited; `apiKey` is what the user typed (empty keeps the stored one). */
interface Draft {
  id?: string;
  name: string;
  provider: EmbeddingProfile['provider'];
  model: string;
  dimensions: string;
  enabled: boolean;
  default: boolean;
  baseUrl: string;
  apiKey: string;
  hasStoredKey: boolean;
  auth: string;
  apiVersion: string;
  modelPath: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function draftOf(p: Pick<EmbeddingProfile, 'provider' | 'model' | 'dimensions' | 'config'> & Partial<EmbeddingProfile>): Draft {
  return {
    ...(p.id && { id: p.id }),
    name: p.name ?? '',
    provider: p.provider,
    model: p.model ?? '',
    dimensions: p.dimensions ? String(p.dimensions) : '',
    enabled: p.enabled ?? true,
    default: p.default ?? false,
    baseUrl: str(p.config.baseUrl),
    apiKey: '',
    // The API masks a stored key; an unchanged (empty) field keeps it.
    hasStoredKey: Boolean(p.id && p.config.apiKey),
    auth: str(p.config.auth) || 'bearer',
    apiVersion: str(p.config.apiVersion),
    modelPath: str(p.config.modelPath),
  };
}

/** The body the API takes: only the fields of the chosen provider; a key left empty is left out (kept). */
function profileBody(d: Draft) {
  const config: Record<string, unknown> = {};
  if (d.provider === 'remote-compatible') {
    config.baseUrl = d.baseUrl.trim();
    config.auth = d.auth;
    if (d.apiKey) config.apiKey = d.apiKey;
    if (d.apiVersion.trim()) config.apiVersion = d.apiVersion.trim();
  }
  if (d.provider === 'local-transformers' && d.modelPath.trim()) config.modelPath = d.modelPath.trim();
  return {
    ...(d.id && { id: d.id }),
    ...(d.name.trim() && { name: d.name.trim() }),
    provider: d.provider,
    model: d.provider === 'none' ? null : d.model.trim() || null,
    dimensions: d.dimensions ? Number(d.dimensions) : null,
    enabled: d.enabled,
    default: d.default,
    config,
  };
}

const BLANK: Record<string, Draft> = {
  'local-transformers': draftOf({ provider: 'local-transformers', model: 'Xenova/all-MiniLM-L6-v2', dimensions: null, config: {} }),
  none: draftOf({ provider: 'none', model: null, dimensions: null, config: {} }),
};

function Embeddings() {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const load = async () => {
    try {
      setSettings(await api<Settings>('/api/v1/settings/embedding'));
      setLoadError(null);
    } catch (err) {
      setLoadError(messageOf(err));
    }
  };
  useEffect(() => void load(), []);

  const startNew = (choice: string) => {
    const preset = settings?.presets.find((p) => p.id === choice);
    // A preset's id names the preset, not a profile: the draft is a new profile.
    if (preset) setDraft({ ...draftOf({ ...preset, id: undefined }), name: preset.label });
    else if (BLANK[choice]) setDraft({ ...BLANK[choice] });
  };

  return (
    <Section title="Embedding profiles" id="embeddings">
      <p class="hint">The active profile (default and enabled) embeds snippets for semantic and hybrid search. With none active, search is keyword-only.</p>
      <ErrorText error={loadError} />
      {settings && (
        <ul class="list compact">
          {settings.profiles.map((p) => (
            <li key={p.id} class="item" data-profile-id={p.id}>
              <div class="item-head">
                <strong>{p.name}</strong>
                {p.active ? <Badge status="active" /> : <Badge status={p.enabled ? 'enabled' : 'disabled'} />}
              </div>
              <p class="meta">
                {p.provider}
                {p.model && ` · ${p.model}`}
                {p.dimensions && ` · ${p.dimensions} dimensions`}
                {str(p.config.baseUrl) && ` · ${str(p.config.baseUrl)}`}
              </p>
              <div class="actions">
                <button type="button" class="secondary" onClick={() => setDraft(draftOf(p))}>
                  Edit {p.name}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {settings && (
        <label class="inline-select">
          New profile from
          <select
            value=""
            onChange={(e) => {
              startNew(e.currentTarget.value);
              e.currentTarget.value = '';
            }}
          >
            <option value="">Choose a starting point…</option>
            {settings.presets.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
            <option value="local-transformers">Local model (transformers.js)</option>
            <option value="none">Keyword only (no embeddings)</option>
          </select>
        </label>
      )}
      {draft && (
        <ProfileForm
          key={draft.id ?? `new-${draft.provider}-${draft.name}`}
          draft={draft}
          onCancel={() => setDraft(null)}
          onSaved={async () => {
            setDraft(null);
            await load();
          }}
        />
      )}
    </Section>
  );
}

function ProfileForm(props: { draft: Draft; onCancel: () => void; onSaved: () => Promise<void> }) {
  const [d, setD] = useState(props.draft);
  const [tested, setTested] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();
  const set = (patch: Partial<Draft>) => setD((x) => ({ ...x, ...patch }));
  const remote = d.provider === 'remote-compatible';

  const test = () =>
    action.run(async () => {
      setTested(null);
      const r = await api<{ model: string | null; dimensions: number; latencyMs: number; keywordOnly?: boolean }>('/api/v1/settings/embedding/test', {
        method: 'POST',
        body: { profile: profileBody(d) },
      });
      setTested(r.keywordOnly ? 'Keyword only: nothing to connect to.' : `Connected: ${r.model}, ${r.dimensions} dimensions, ${r.latencyMs} ms.`);
    });
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await api<{ reembedJobs: number }>('/api/v1/settings/embedding', { method: 'PUT', body: { profile: profileBody(d) } });
      setSaved(r.reembedJobs ? `Saved; ${r.reembedJobs} libraries are being re-embedded.` : 'Saved.');
      await props.onSaved();
    });
  };

  return (
    <form class="form profile" onSubmit={save} aria-label={d.id ? `Edit profile ${d.name}` : 'New profile'}>
      <h3>{d.id ? `Edit ${d.name}` : 'New profile'}</h3>
      <label>
        Name
        <input value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} required />
      </label>
      <p class="meta">Provider: {d.provider}</p>
      {d.provider !== 'none' && (
        <label>
          Model
          <input value={d.model} onInput={(e) => set({ model: e.currentTarget.value })} required={remote} spellcheck={false} />
        </label>
      )}
      {remote && (
        <>
          <label>
            Base URL
            <input type="url" required value={d.baseUrl} onInput={(e) => set({ baseUrl: e.currentTarget.value })} spellcheck={false} />
          </label>
          <label>
            API key
            <input
              type="password"
              autocomplete="off"
              value={d.apiKey}
              onInput={(e) => set({ apiKey: e.currentTarget.value })}
              placeholder={d.hasStoredKey ? 'Saved: leave empty to keep it' : ''}
            />
          </label>
          <label>
            Authentication
            <select value={d.auth} onChange={(e) => set({ auth: e.currentTarget.value })}>
              <option value="bearer">Authorization: Bearer (OpenAI, local servers)</option>
              <option value="api-key">api-key header (Azure OpenAI)</option>
            </select>
          </label>
          <label>
            API version <span class="optional">(Azure only)</span>
            <input value={d.apiVersion} onInput={(e) => set({ apiVersion: e.currentTarget.value })} spellcheck={false} />
          </label>
        </>
      )}
      {d.provider === 'local-transformers' && (
        <label>
          Model folder <span class="optional">(optional: a folder with the model's files)</span>
          <input value={d.modelPath} onInput={(e) => set({ modelPath: e.currentTarget.value })} spellcheck={false} />
        </label>
      )}
      {d.provider !== 'none' && (
        <label>
          Dimensions <span class="optional">(optional)</span>
          <input type="number" min={1} value={d.dimensions} onInput={(e) => set({ dimensions: e.currentTarget.value })} />
        </label>
      )}
      <label class="check">
        <input type="checkbox" checked={d.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} /> Enabled
      </label>
      <label class="check">
        <input type="checkbox" checked={d.default} onChange={(e) => set({ default: e.currentTarget.checked })} /> Default (active when enabled; libraries are re-embedded)
      </label>
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Save profile
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={test}>
          {action.busy ? 'Working…' : 'Test connection'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      <ErrorText error={action.error} />
      {tested && <Notice>{tested}</Notice>}
      {saved && <Notice>{saved}</Notice>}
    </form>
  );
}
