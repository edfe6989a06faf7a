/** Unique element ids for labels and descriptions. */
import { useRef } from 'preact/hooks';

let counter = 0;

/** An id unique on the page, stable for the component's life (`prefix-<n>`). */
export function useId(prefix: string): string {
  return useRef(`${prefix}-${++counter}`).current;
}
