import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, messageOf } from '../components.js';

interface Listing {
  path: string;
  parent: string | null;
  directories: { name: string; path: string; isGitRepository: boolean }[];
}

/** Browses the server's folders (GET /api/v1/fs/browse, limited to LOCAL_SOURCE_ROOTS) to pick a local library. */
export function FolderPicker(props: { open: boolean; start: string; onPick: (path: string) => void; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [listing, setListing] = useState<Listing | null>(null);
  const [error, setError] = useState<string | null>(null);

  const browse = (path?: string) => api<Listing>(`/api/v1/fs/browse${path ? `?path=${encodeURIComponent(path)}` : ''}`);
  const go = async (path?: string) => {
    try {
      setListing(await browse(path));
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  /** The folder typed so far when there is one, else where the server starts (the first allowed root, or home). */
  const open = async (start: string) => {
    try {
      setListing(start.startsWith('/') ? await browse(start).catch(() => browse()) : await browse());
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      d.showModal();
      void open(props.start);
    }
    if (!props.open && d.open) d.close();
  }, [props.open]);

  return (
    <dialog ref={ref} onClose={props.onClose} aria-labelledby="picker-title" class="picker">
      <h2 id="picker-title">Choose a folder on the server</h2>
      {listing && (
        <>
          <p class="path">
            <code data-testid="picker-path">{listing.path}</code>
          </p>
          {listing.parent && (
            <button type="button" class="secondary" onClick={() => go(listing.parent!)}>
              Up to {listing.parent}
            </button>
          )}
          {listing.directories.length ? (
            <ul class="folders" aria-label="Folders">
              {listing.directories.map((d) => (
                <li key={d.path}>
                  <button type="button" class="link" onClick={() => go(d.path)}>
                    {d.name}
                  </button>
                  {d.isGitRepository && <span class="badge" data-status="git">git</span>}
                </li>
              ))}
            </ul>
          ) : (
            <p class="hint">No folders in here.</p>
          )}
        </>
      )}
      <ErrorText error={error} />
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" disabled={!listing} onClick={() => listing && props.onPick(listing.path)}>
          Choose this folder
        </button>
      </div>
    </dialog>
  );
}
