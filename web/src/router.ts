import { useEffect, useState } from 'preact/hooks';

/**
 * Client-side navigation with the History API: the server answers index.html for every page path, and the app
 * picks the page from `location.pathname`.
 */
const listeners = new Set<() => void>();

export function navigate(to: string, o: { replace?: boolean } = {}): void {
  if (o.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
  if (!o.replace) window.scrollTo(0, 0);
}

/** The current location; re-renders on navigation and on back/forward. */
export function useLocation(): URL {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((t) => t + 1);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return new URL(location.href);
}

/** Follows an in-app link without a page load; modified clicks (new tab, download) keep the browser's behaviour. */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? undefined;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return;
  if (a.origin !== location.origin) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
