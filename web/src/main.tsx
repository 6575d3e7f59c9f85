import { render } from 'preact';
import { Link } from './components.js';
import { LibrariesPage } from './pages/libraries.js';
import { RecipesPage } from './pages/recipes.js';
import { SearchPage } from './pages/search.js';
import { SettingsPage } from './pages/settings.js';
import { TranscriptsPage } from './pages/transcripts.js';
import { onLinkClick, useLocation } from './router.js';

const PAGES = [
  { path: '/', label: 'Libraries' },
  { path: '/search', label: 'Search' },
  { path: '/transcripts', label: 'Transcripts' },
  { path: '/recipes', label: 'Recipes' },
  { path: '/settings', label: 'Settings' },
];

function Page({ path }: { path: string }) {
  switch (path) {
    case '/':
    case '/libraries':
      return <LibrariesPage />;
    case '/search':
      return <SearchPage />;
    case '/transcripts':
      return <TranscriptsPage />;
    case '/recipes':
    case '/recipes/share':
      return <RecipesPage share={path === '/recipes/share'} />;
    case '/settings':
      return <SettingsPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            There is nothing at <code>{path}</code>. <Link href="/">Go to the libraries</Link>.
          </p>
        </>
      );
  }
}

function App() {
  const path = useLocation().pathname.replace(/\/+$/, '') || '/';
  const section = PAGES.find((p) => p.path === path || (p.path !== '/' && path.startsWith(`${p.path}/`)))?.path ?? (path === '/libraries' ? '/' : '');
  const title = PAGES.find((p) => p.path === section)?.label;
  document.title = title ? `${title} · Gristmill` : 'Gristmill';
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Gristmill
        </Link>
        <nav aria-label="Main">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <a href={p.path} aria-current={p.path === section ? 'page' : undefined} onClick={onLinkClick}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);

// The service worker shows push notifications; registering it early also makes the app installable (share target).
if ('serviceWorker' in navigator && window.isSecureContext) {
  navigator.serviceWorker.register('/sw.js').catch((err: unknown) => console.warn('service worker not registered', err));
}
