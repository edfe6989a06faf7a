/**
 * The Switchyard console (issue #19; docs/guide/console.md): one static page the API serves at
 * /console, rendered with Preact. The shell: navigation, the credential form (a token or API key
 * kept in sessionStorage for this browser session), and the page of the current hash route.
 */
import { render } from 'preact';
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

/** The page of the current route. */
function Page() {
  const route = useRoute();
  // Re-render every page from scratch when the credential changes: what it may see changes too.
  const [generation, setGeneration] = useState(0);
  useEffect(() => onTokenChange(() => setGeneration((g) => g + 1)), []);
  const [section = 'workflows', id] = route.segments;
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
        {page}
      </main>
    </>
  );
}

render(<Page />, document.getElementById('app')!);
