import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, download, hasApiKey, openStream, type StreamHandlers } from './api.js';
import { onLinkClick } from './router.js';

/** Small pieces every page uses. */

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs a button's or form's async work: `busy` while it runs, `error` (a readable message) when it fails. */
export function useAction(): { busy: boolean; error: string | null; run: (work: () => Promise<unknown>) => Promise<boolean>; setError: (e: string | null) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (work: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

/** Follows an event stream for as long as the component is shown; `problem` is what to tell the user. */
export function useStream(path: string, handlers: StreamHandlers): string | null {
  const [problem, setProblem] = useState<string | null>(null);
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(
    () =>
      openStream(path, {
        onEvent: (event, data) => ref.current.onEvent(event, data),
        onOpen: () => ref.current.onOpen?.(),
        onProblem: setProblem,
      }),
    [path],
  );
  return problem;
}

/** A list of jobs or items from the API, kept current by an event stream. */
export interface LiveList<T> {
  items: T[] | null;
  loadError: string | null;
  /** What to tell the user about the stream, when it is not connected. */
  streamProblem: string | null;
  reload(): Promise<void>;
  /** Replaces the entry with the same id, or puts the new one first. */
  upsert(item: T): void;
  /** Changes the entry with this id; an id the list does not have (started elsewhere) reloads the list. */
  patch(id: string, change: (item: T) => T): void;
}

/**
 * Loads `listPath` (a `{items}` page) at once and again whenever the stream at `streamPath` (re)connects, so nothing
 * that happened in between is missed; `onEvent` applies each event to the list.
 */
export function useLiveList<T extends { id: string }>(listPath: string, streamPath: string, onEvent: (list: LiveList<T>, event: string, data: unknown) => void): LiveList<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const reload = async () => {
    try {
      setItems((await api<{ items: T[] }>(listPath)).items);
      setLoadError(null);
    } catch (err) {
      setLoadError(messageOf(err));
    }
  };
  const upsert = (item: T) => setItems((list) => (list?.some((i) => i.id === item.id) ? list.map((i) => (i.id === item.id ? item : i)) : [item, ...(list ?? [])]));
  const patch = (id: string, change: (item: T) => T) =>
    setItems((list) => {
      if (!list?.some((i) => i.id === id)) {
        void reload();
        return list;
      }
      return list.map((i) => (i.id === id ? change(i) : i));
    });
  useEffect(() => void reload(), [listPath]);
  const live: LiveList<T> = { items, loadError, streamProblem: null, reload, upsert, patch };
  live.streamProblem = useStream(streamPath, { onOpen: () => void reload(), onEvent: (event, data) => onEvent(live, event, data) });
  return live;
}

export function ErrorText({ error }: { error: string | null | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export function Badge({ status }: { status: string }) {
  return (
    <span class="badge" data-status={status}>
      {status.replace(/_/g, ' ')}
    </span>
  );
}

export function Progress({ value, label }: { value: number; label: string }) {
  return <progress max={100} value={value} aria-label={label} title={`${value}%`} />;
}

export function Link({ href, children, class: cls, label }: { href: string; children: ComponentChildren; class?: string; label?: string }) {
  return (
    <a href={href} onClick={onLinkClick} class={cls} aria-label={label}>
      {children}
    </a>
  );
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}

/** Copies text; falls back to a selected textarea where the Clipboard API is missing (plain http). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = Object.assign(document.createElement('textarea'), { value: text });
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" class="secondary" onClick={copy} aria-label={`${label}: ${text}`}>
      {copied ? 'Copied' : label}
    </button>
  );
}

/**
 * A download link: a plain link when no API key is needed (the browser downloads it), else fetched with the key.
 */
export function DownloadLink({ path, children }: { path: string; children: ComponentChildren }) {
  const [error, setError] = useState<string | null>(null);
  const click = (e: MouseEvent) => {
    if (!hasApiKey()) return;
    e.preventDefault();
    download(path).then(() => setError(null), (err) => setError(messageOf(err)));
  };
  return (
    <>
      <a href={path} download onClick={click} class="button secondary">
        {children}
      </a>
      {error && <ErrorText error={error} />}
    </>
  );
}

/** A modal confirmation (native <dialog>: focus is trapped, Escape cancels). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} onClose={props.onCancel} aria-labelledby="confirm-title">
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel} autofocus>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** `mm:ss` (or `h:mm:ss`) of a number of seconds. */
export function formatClock(seconds: number): string {
  const s = Math.floor(seconds % 60);
  const m = Math.floor(seconds / 60) % 60;
  const h = Math.floor(seconds / 3600);
  const two = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${two(m)}:${two(s)}` : `${two(m)}:${two(s)}`;
}
