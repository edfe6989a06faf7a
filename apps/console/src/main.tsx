/**
 * The Switchyard console (issue #19; docs/guide/console.md): one static page the API serves at
 * /console, rendered with Preact. The shell: navigation, the credential form (a token or API key
 * kept in sessionStorage for this browser session), and the page of the current hash route.
 */
import { Component, render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getToken, onTokenChange, setToken } from './api.ts';
import { href, useRoute } from './router.ts';
import { InboxPage } from './pages/inbox.tsx';
import { RunPage } from './pages/run.tsx';
import { RunsPage } from './pages/runs.tsx';
import { WorkflowPage } from './pages/workflow.tsx';
import { WorkflowsPage } from './pages/workflows.tsx';
import './console.css';

/** The credential form: shows whether one is kept, lets the person enter or forget it. */
function SignIn() {
  const [token, setTokenState] = useState(getToken());
  const [draft, setDraft] = useState('');
  useEffect(() => onTokenChange(() => setTokenState(getToken())), []);
  if (token !== null) {
    return (
      <div class="signin">
        <span>Signed in with a token</span>
        <button type="button" onClick={() => setToken(null)}>
          Sign out
        </button>
      </div>
    );
  }
  return (
    <form
      class="signin"
      onSubmit={(event) => {
        event.preventDefault();
        setToken(draft);
        setDraft('');
      }}
    >
      <label for="token">Token or API key</label>
      <input id="token" type="password" autocomplete="off" value={draft} onInput={(event) => setDraft((event.target as HTMLInputElement).value)} />
      <button type="submit" disabled={draft.trim() === ''}>
        Sign in
      </button>
    </form>
  );
}

/** The navigation links; the current section is marked for assistive technology. */
function Nav({ section }: { section: string }) {
  const links: Array<[string, string]> = [
    ['workflows', 'Workflows'],
    ['runs', 'Runs'],
    ['inbox', 'Approvals'],
  ];
  return (
    <nav class="main-nav" aria-label="Sections">
      {links.map(([id, label]) => (
        <a key={id} href={href([id])} aria-current={section === id ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/**
 * Shows what went wrong instead of a blank page when a page throws while rendering (an answer of an
 * unexpected shape, a bug): the navigation and the sign-in stay usable.
 */
class PageBoundary extends Component<{ children: ComponentChildren }, { error: unknown }> {
  override state = { error: null as unknown };
  override componentDidCatch(error: unknown): void {
    this.setState({ error });
  }
  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div class="error" role="alert">
        <strong>This page failed</strong>: {this.state.error instanceof Error ? this.state.error.message : String(this.state.error)}. Reload the page, or go to
        another section.
      </div>
    );
  }
}

/** Moves focus to the page's heading when the route changes, so that keyboard and screen-reader users start on the new page. */
function useFocusOnNavigation(routeKey: string): void {
  const [first, setFirst] = useState(true);
  useEffect(() => {
    if (first) {
      setFirst(false);
      return;
    }
    // After the new page rendered its heading.
    const timer = setTimeout(() => {
      const heading = document.querySelector<HTMLElement>('main h1');
      if (heading === null) return;
      heading.tabIndex = -1;
      heading.focus();
    }, 0);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [routeKey]);
}

/** The page of the current route. */
function Page() {
  const route = useRoute();
  // Re-render every page from scratch when the credential changes: what it may see changes too.
  const [generation, setGeneration] = useState(0);
  useEffect(() => onTokenChange(() => setGeneration((g) => g + 1)), []);
  const [section = 'workflows', id] = route.segments;
  useFocusOnNavigation(route.segments.join('/'));
  let page;
  if (section === 'workflows' && id) page = <WorkflowPage workflowId={id} runId={route.query.get('run')} />;
  else if (section === 'runs' && id) page = <RunPage runId={id} />;
  else if (section === 'runs') page = <RunsPage />;
  else if (section === 'inbox') page = <InboxPage />;
  else page = <WorkflowsPage />;
  return (
    <>
      <header class="top">
        <a class="brand" href={href(['workflows'])}>
          Switchyard
        </a>
        <Nav section={section} />
        <SignIn />
      </header>
      <main id="main" key={`${generation}:${route.segments.join('/')}`}>
        <PageBoundary>{page}</PageBoundary>
      </main>
    </>
  );
}

render(<Page />, document.getElementById('app')!);
