import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, ErrorText, Link, Notice, Section, useAction } from '../components.js';
import type { LockfileResult } from '../types.js';

const enc = encodeURIComponent;

/** The files the API reads (POST /api/v1/libs/from-lockfile), offered for pasted text whose name is unknown. */
const LOCKFILES = ['package-lock.json', 'pnpm-lock.yaml', 'yarn.lock', 'requirements.txt', 'poetry.lock', 'uv.lock', 'Cargo.lock'];
const MANIFESTS = ['package.json', 'pyproject.toml', 'Cargo.toml'];

/**
 * "Index a project's dependencies": a lockfile or manifest, chosen (read here as text) or pasted, is sent to the API,
 * which registers and indexes the exact version of each direct dependency; the answer is shown per dependency.
 */
export function LockfilePanel({ onIndexed }: { onIndexed: () => Promise<void> }) {
  const [content, setContent] = useState('');
  const [fileName, setFileName] = useState('');
  const [manifest, setManifest] = useState<string | null>(null);
  const [includeDev, setIncludeDev] = useState(false);
  const [result, setResult] = useState<LockfileResult | null>(null);
  const action = useAction();

  const readFile = (input: HTMLInputElement, use: (name: string, text: string) => void) => {
    const file = input.files?.[0];
    if (file) void action.run(async () => use(file.name, await file.text()));
  };
  const submit = (e: Event) => {
    e.preventDefault();
    setResult(null);
    void action.run(async () => {
      const body = { content, includeDev, ...(fileName.trim() && { fileName: fileName.trim() }), ...(manifest !== null && { manifest }) };
      setResult(await api<LockfileResult>('/api/v1/libs/from-lockfile', { method: 'POST', body }));
      await onIndexed();
    });
  };

  return (
    <Section title="Index a project's dependencies" id="dependencies">
      <form class="form" onSubmit={submit}>
        <label>
          Lockfile or manifest
          <input type="file" accept={[...LOCKFILES, ...MANIFESTS, '.json', '.yaml', '.lock', '.txt', '.toml'].join(',')} onChange={(e) => readFile(e.currentTarget, (name, text) => (setFileName(name), setContent(text)))} />
        </label>
        <label>
          Or paste it
          <textarea rows={6} required value={content} onInput={(e) => setContent(e.currentTarget.value)} spellcheck={false} placeholder="The contents of package-lock.json, poetry.lock, Cargo.lock…" />
        </label>
        <label>
          File name <span class="optional">(tells the format of pasted text)</span>
          <input list="lockfile-names" value={fileName} onInput={(e) => setFileName(e.currentTarget.value)} placeholder="package-lock.json" spellcheck={false} />
          <datalist id="lockfile-names">
            {[...LOCKFILES, ...MANIFESTS].map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        </label>
        <details>
          <summary>More options</summary>
          <label>
            Manifest <span class="optional">(optional: package.json, pyproject.toml or Cargo.toml, to tell direct dependencies apart)</span>
            <input type="file" accept={MANIFESTS.join(',')} onChange={(e) => readFile(e.currentTarget, (_name, text) => setManifest(text))} />
          </label>
          <label class="check">
            <input type="checkbox" checked={includeDev} onChange={(e) => setIncludeDev(e.currentTarget.checked)} /> Include development dependencies
          </label>
        </details>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Reading…' : 'Index dependencies'}
        </button>
        <ErrorText error={action.error} />
      </form>
      {result && <LockfileReport result={result} />}
    </Section>
  );
}

function LockfileReport({ result }: { result: LockfileResult }) {
  const { summary } = result;
  return (
    <div class="lockfile-report">
      <Notice>
        <span data-testid="lockfile-summary">
          {summary.ready} ready · {summary.queued} queued · {summary.unknown} unknown
        </span>{' '}
        ({result.format}, {result.ecosystem})
      </Notice>
      {result.warnings.map((w) => (
        <p key={w} class="hint">
          {w}
        </p>
      ))}
      <div class="table-scroll">
        <table>
          <caption>Direct dependencies</caption>
          <thead>
            <tr>
              <th scope="col">Package</th>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
              <th scope="col">Library</th>
            </tr>
          </thead>
          <tbody>
            {result.dependencies.map((d) => (
              <tr key={`${d.name}@${d.version}`} data-dependency={d.name} data-status={d.status}>
                <th scope="row">{d.name}</th>
                <td>{d.version}</td>
                <td>
                  <Badge status={d.status} />
                  {d.reason && <small class="hint"> {d.reason}</small>}
                </td>
                <td>{d.libraryId ? <Link href={`/search?library=${enc(d.libraryId)}`}>{d.libraryId}</Link> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
