/**
 * Hash routing: `#/workflows`, `#/workflows/<id>?run=<runId>`, `#/runs`, `#/runs/<id>`, `#/inbox`.
 * The hash keeps the console one static page the API serves as is; nothing secret goes in it.
 */
import { useEffect, useState } from 'preact/hooks';

/** A parsed location: its path segments and query parameters. */
export interface Route {
  segments: string[];
  query: URLSearchParams;
}

/** The route of the current hash (default `#/workflows`). */
export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, '') || '/workflows';
  const [path = '', query = ''] = hash.split('?', 2);
  return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) };
}

/** The current route, updated on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** A hash link to `path` (segments encoded) with `query`. */
export function href(path: string[], query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')).toString();
  return `#/${path.map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
}

/** Goes to `link` (a hash from {@link href}). */
export function navigate(link: string): void {
  location.hash = link.replace(/^#/, '');
}
