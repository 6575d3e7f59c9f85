import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, useAction } from '../components.js';

/** One result of GET /api/v1/libs/search (Context7's shape). */
export interface FoundLibrary {
  id: string;
  title: string;
  state: string;
  totalSnippets: number;
}

const STATE_WORDS: Record<string, string> = { finalized: 'indexed', initial: 'being indexed', processing: 'being indexed', error: 'failed' };

/**
 * Finds a library by name, as an assistant's resolve-library-id does: a package nobody registered is looked up in
 * the registries and indexed on demand (docs/sources.md, "On demand"). `onFound` gets the best match.
 */
export function FindLibrary({ onFound }: { onFound: (lib: FoundLibrary) => void }) {
  const [name, setName] = useState('');
  const [found, setFound] = useState<FoundLibrary[] | null>(null);
  const action = useAction();
  const find = () =>
    action.run(async () => {
      const { results } = await api<{ results: FoundLibrary[] }>(`/api/v1/libs/search?${new URLSearchParams({ libraryName: name })}`);
      setFound(results);
      if (results[0]) onFound(results[0]);
    });
  return (
    <form
      class="form inline"
      aria-label="Find a library"
      onSubmit={(e) => {
        e.preventDefault();
        void find();
      }}
    >
      <label>
        Find a library by name
        <input type="search" required maxLength={300} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="fastify, pydantic, tokio…" />
      </label>
      <button type="submit" class="secondary" disabled={action.busy}>
        {action.busy ? 'Looking…' : 'Find'}
      </button>
      <ErrorText error={action.error} />
      {found && (
        <p class="hint" data-testid="found-libraries">
          {found.length
            ? found.slice(0, 5).map((l, i) => `${i ? ', ' : ''}${l.id} (${STATE_WORDS[l.state] ?? l.state})`)
            : 'No library of that name is indexed, and no registry has a package of that name.'}
        </p>
      )}
    </form>
  );
}
