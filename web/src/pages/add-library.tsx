import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, Notice, Section, useAction } from '../components.js';
import { POLICY_HINT, REFRESH_CHOICES, REGISTRIES, type Registry } from '../sources.js';
import type { Library, LibrarySource } from '../types.js';
import { FolderPicker } from './folder-picker.js';

/** The form's choice of source: the three registries are one choice, with the registry beside the name. */
type Kind = 'git-host' | 'local' | 'package' | 'website';

interface Fields {
  url: string;
  folder: string;
  packageName: string;
  siteUrl: string;
  token: string;
  title: string;
  branch: string;
  refreshEvery: string;
  versionPolicy: string;
}
const EMPTY: Fields = { url: '', folder: '', packageName: '', siteUrl: '', token: '', title: '', branch: '', refreshEvery: '', versionPolicy: '' };

const KINDS: { value: Kind; label: string }[] = [
  { value: 'git-host', label: 'Git host URL' },
  { value: 'local', label: 'Folder on the server' },
  { value: 'package', label: 'Package from a registry' },
  { value: 'website', label: 'Documentation site' },
];

const TITLE_DEFAULT: Record<Kind, string> = {
  'git-host': 'the repository name',
  local: 'the folder name',
  package: 'the package name',
  website: "the site's title",
};

/** POST /api/v1/libs's body for what the form holds; optional fields only when filled in. */
function bodyOf(kind: Kind, registry: Registry, f: Fields, autoIndex: boolean) {
  const source: LibrarySource = kind === 'package' ? registry : kind;
  const sourceUrl = { 'git-host': f.url, local: f.folder, package: f.packageName, website: f.siteUrl }[kind].trim();
  const hasBranch = kind === 'git-host' || kind === 'local';
  return {
    source,
    sourceUrl,
    autoIndex,
    ...(f.title.trim() && { title: f.title.trim() }),
    ...(hasBranch && f.branch.trim() && { branch: f.branch.trim() }),
    ...(kind === 'git-host' && f.token.trim() && { gitHostToken: f.token.trim() }),
    ...(f.refreshEvery && { refreshEvery: f.refreshEvery }),
    ...(kind !== 'website' && f.versionPolicy.trim() && { versionPolicy: f.versionPolicy.trim() }),
  };
}

export function AddLibrary({ onAdded }: { onAdded: () => Promise<void> }) {
  const [kind, setKind] = useState<Kind>('git-host');
  const [registry, setRegistry] = useState<Registry>('npm');
  const [fields, setFields] = useState<Fields>(EMPTY);
  const [autoIndex, setAutoIndex] = useState(true);
  const [added, setAdded] = useState<string | null>(null);
  const action = useAction();
  const set = (change: Partial<Fields>) => setFields((f) => ({ ...f, ...change }));

  const submit = (e: Event) => {
    e.preventDefault();
    setAdded(null);
    void action.run(async () => {
      const res = await api<{ library: Library }>('/api/v1/libs', { method: 'POST', body: bodyOf(kind, registry, fields, autoIndex) });
      setAdded(`Added ${res.library.id}${autoIndex ? '; indexing has started.' : '.'}`);
      setFields(EMPTY);
      await onAdded();
    });
  };

  return (
    <Section title="Add a library" id="add-library">
      <form onSubmit={submit} class="form">
        <fieldset class="choices">
          <legend>Source</legend>
          {KINDS.map((k) => (
            <label key={k.value}>
              <input type="radio" name="source" value={k.value} checked={kind === k.value} onChange={() => setKind(k.value)} /> {k.label}
            </label>
          ))}
        </fieldset>
        <SourceFields kind={kind} registry={registry} setRegistry={setRegistry} fields={fields} set={set} />
        <MoreOptions kind={kind} fields={fields} set={set} />
        <label class="check">
          <input type="checkbox" checked={autoIndex} onChange={(e) => setAutoIndex(e.currentTarget.checked)} /> Index it now
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Adding…' : 'Add library'}
        </button>
        <ErrorText error={action.error} />
        {added && <Notice>{added}</Notice>}
      </form>
    </Section>
  );
}

interface FieldProps {
  kind: Kind;
  fields: Fields;
  set: (change: Partial<Fields>) => void;
}

/** The field that names the source: a URL, a folder, a package with its registry, or a site. */
function SourceFields({ kind, registry, setRegistry, fields, set }: FieldProps & { registry: Registry; setRegistry: (r: Registry) => void }) {
  const [picking, setPicking] = useState(false);
  switch (kind) {
    case 'git-host':
      return (
        <>
          <label>
            Repository URL
            <input type="url" required value={fields.url} onInput={(e) => set({ url: e.currentTarget.value })} placeholder="https://github.com/owner/repo" />
          </label>
          <label>
            Access token <span class="optional">(optional, for private repositories)</span>
            <input type="password" autocomplete="off" value={fields.token} onInput={(e) => set({ token: e.currentTarget.value })} />
            <span class="hint">Kept on the server and never shown again.</span>
          </label>
        </>
      );
    case 'local':
      return (
        <div class="with-button">
          <label>
            Folder
            <input required value={fields.folder} onInput={(e) => set({ folder: e.currentTarget.value })} placeholder="/home/me/code/project" spellcheck={false} />
          </label>
          <button type="button" class="secondary" onClick={() => setPicking(true)}>
            Browse…
          </button>
          <FolderPicker
            open={picking}
            start={fields.folder}
            onClose={() => setPicking(false)}
            onPick={(p) => {
              set({ folder: p });
              setPicking(false);
            }}
          />
        </div>
      );
    case 'package':
      return (
        <div class="pair">
          <label>
            Registry
            <select value={registry} onChange={(e) => setRegistry(e.currentTarget.value as Registry)}>
              {REGISTRIES.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Package name
            <input
              required
              value={fields.packageName}
              onInput={(e) => set({ packageName: e.currentTarget.value })}
              placeholder={REGISTRIES.find((r) => r.value === registry)?.placeholder}
              spellcheck={false}
              autocapitalize="off"
              aria-describedby="package-hint"
            />
          </label>
          <p class="hint field-hint wide" id="package-hint">
            Read through the server's own registry settings (npm, pip, cargo), so a company mirror applies. Its versions are the published ones.
          </p>
        </div>
      );
    case 'website':
      return (
        <div>
          <label>
            Site URL
            <input type="url" required value={fields.siteUrl} onInput={(e) => set({ siteUrl: e.currentTarget.value })} placeholder="https://docs.example.com/guide/" aria-describedby="site-hint" />
          </label>
          <p class="hint field-hint" id="site-hint">
            Read from its llms.txt, else its sitemap, else the pages under this address on the same site.
          </p>
        </div>
      );
  }
}

/** Title, branch, and how the library is kept fresh. */
function MoreOptions({ kind, fields, set }: FieldProps) {
  return (
    <details>
      <summary>More options</summary>
      <label>
        Title <span class="optional">(default: {TITLE_DEFAULT[kind]})</span>
        <input value={fields.title} onInput={(e) => set({ title: e.currentTarget.value })} />
      </label>
      {(kind === 'git-host' || kind === 'local') && (
        <label>
          Branch <span class="optional">(default: the default branch, or a local folder's working tree)</span>
          <input value={fields.branch} onInput={(e) => set({ branch: e.currentTarget.value })} spellcheck={false} />
        </label>
      )}
      <label>
        Refresh <span class="optional">(optional)</span>
        <select value={fields.refreshEvery} onChange={(e) => set({ refreshEvery: e.currentTarget.value })}>
          {REFRESH_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      {kind !== 'website' && (
        <div>
          <label>
            Version policy <span class="optional">(optional)</span>
            <input value={fields.versionPolicy} onInput={(e) => set({ versionPolicy: e.currentTarget.value })} placeholder="minors:3" spellcheck={false} autocapitalize="off" aria-describedby="policy-hint" />
          </label>
          <p class="hint field-hint" id="policy-hint">
            Which new versions a refresh adds (default: the server's setting): {POLICY_HINT}
          </p>
        </div>
      )}
    </details>
  );
}
