/**
 * Shared pieces of the console's pages. Everything from the API (names, outputs, prompts, errors)
 * is rendered as text by Preact (never as HTML: the console has no `dangerouslySetInnerHTML`), so
 * untrusted content shows as what it is.
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

/** What {@link useAsync} holds: the value once loaded, the error of the last load, and a reload. */
export interface AsyncState<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` now and whenever `deps` change (and on `reload()`), keeping the last value while
 * a new load runs (no flicker on live refreshes). A result that arrives after a newer load started
 * is dropped.
 */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    load().then(
      (result) => {
        if (mine !== generation.current) return;
        setValue(result);
        setError(null);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(failure);
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { value, error, loading, reload: run };
}

/**
 * `fn`, called at most once per `ms` however often the returned function is called (the first
 * call waits `ms`, later calls in that window join it): live events arrive in bursts (a stream
 * replays a run's history on connect), and each need not refetch.
 */
export function useThrottled(fn: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      latest.current();
    }, ms);
  }, [ms]);
}

/** What an error means to a person: 401 sign in, 403 not allowed, otherwise the API's message. */
export function describeError(error: unknown): { title: string; message: string; problems: string[] } {
  if (error instanceof ApiError) {
    const problems = error.detail.problems ?? [];
    if (error.status === 401) return { title: 'Sign in needed', message: `${error.detail.message}. Enter a token or API key above.`, problems };
    if (error.status === 403) return { title: 'Not allowed', message: error.detail.message, problems };
    if (error.status === 404) return { title: 'Not found', message: error.detail.message, problems };
    if (error.status === 409) return { title: 'Conflict', message: error.detail.message, problems };
    return { title: `Error ${error.status}`, message: error.detail.message, problems };
  }
  return { title: 'Cannot reach the service', message: error instanceof Error ? error.message : String(error), problems: [] };
}

/** An error shown in place (role alert), with the API's problems listed. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const { title, message, problems } = describeError(error);
  return (
    <div class="error" role="alert">
      <strong>{title}</strong>: {message}
      {problems.length > 0 && (
        <ul>
          {problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** JSON shown collapsed under `label` (a `<details>`: keyboard and screen-reader friendly). */
export function Json({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details class="json" open={open}>
      <summary>{label}</summary>
      {/* Focusable: a long value scrolls, and a keyboard must be able to scroll it too. */}
      <pre tabIndex={0}>{value === undefined ? 'undefined' : JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** A status (run, node run, runState) as a coloured badge; the colour class is the status, the text says it. */
export function Status({ status }: { status: string | null | undefined }) {
  const text = status ?? 'unknown';
  return <span class={`status status-${text.replace(/[^a-z_-]/gi, '')}`}>{text.replace(/_/g, ' ')}</span>;
}

/** An ISO time as the person's local date and time; '—' for none. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** Page navigation for an API `pagination` block. */
export function Pager({ pagination, onPage }: { pagination: { page: number; totalPages: number; total: number }; onPage: (page: number) => void }) {
  if (pagination.totalPages <= 1) return <p class="muted">{pagination.total} in all</p>;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={pagination.page <= 1} onClick={() => onPage(pagination.page - 1)}>
        Previous page
      </button>
      <span>
        Page {pagination.page} of {pagination.totalPages} ({pagination.total} in all)
      </span>
      <button type="button" disabled={pagination.page >= pagination.totalPages} onClick={() => onPage(pagination.page + 1)}>
        Next page
      </button>
    </nav>
  );
}

/** A page's title (the one `h1`) and what goes with it. */
export function PageTitle({ children, actions }: { children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    const text = typeof children === 'string' ? children : 'Switchyard';
    document.title = `${text} · Switchyard console`;
  }, [children]);
  return (
    <header class="page-title">
      <h1>{children}</h1>
      {actions && <div class="actions">{actions}</div>}
    </header>
  );
}

/** A JSON text field with a label: parses on every change and says what is wrong in place. */
export function JsonEditor({ label, value, onChange, rows = 8 }: { label: string; value: string; onChange: (text: string, parsed: { ok: true; value: unknown } | { ok: false; error: string }) => void; rows?: number }) {
  const [problem, setProblem] = useState<string | null>(null);
  const id = useRef(`json-${Math.random().toString(36).slice(2)}`).current;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        spellcheck={false}
        value={value}
        aria-invalid={problem !== null}
        aria-describedby={problem ? `${id}-problem` : undefined}
        onInput={(event) => {
          const text = (event.target as HTMLTextAreaElement).value;
          try {
            const parsed = text.trim() === '' ? undefined : JSON.parse(text);
            setProblem(null);
            onChange(text, { ok: true, value: parsed });
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            setProblem(message);
            onChange(text, { ok: false, error: message });
          }
        }}
      />
      {problem && (
        <p class="field-problem" id={`${id}-problem`}>
          Not valid JSON: {problem}
        </p>
      )}
    </div>
  );
}
