/**
 * A linear-time `replace` for the `strings` extension. The extension's own rebuilds the whole
 * string at every occurrence (quadratic: 50 KB took 90 s), and its result can be far larger than
 * its inputs (`s.replace('x', t)` multiplies sizes), so this one finds the occurrences first,
 * charges the evaluation budget for the size of the result, and only then builds it.
 *
 * Semantics (CEL strings extension, as Go's `strings.Replace`): `s.replace(old, new)` replaces
 * every non-overlapping occurrence, left to right; `s.replace(old, new, n)` the first `n`, all
 * when `n` is negative, none when 0. An empty `old` matches before every character and at the
 * end.
 */
import { celMethod, CelScalar } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { chargeBudget, STRING_UNIT_CHARS } from './evaluation-budget.ts';

/** `text` with the first `limit` occurrences of `old` replaced by `replacement` (see the module comment). */
export function replaceLinear(text: string, old: string, replacement: string, limit: number): string {
  const max = limit < 0 ? Number.POSITIVE_INFINITY : limit;
  const pieces = old === '' ? Array.from(text) : undefined;
  const positions: number[] = [];
  if (pieces) {
    for (let i = 0; i <= pieces.length && positions.length < max; i++) positions.push(i);
  } else {
    for (let at = text.indexOf(old); at !== -1 && positions.length < max; at = text.indexOf(old, at + old.length)) positions.push(at);
  }
  const length = text.length + positions.length * (replacement.length - old.length);
  chargeBudget(Math.ceil(length / STRING_UNIT_CHARS));
  if (pieces) {
    return pieces.map((piece, i) => (i < positions.length ? replacement + piece : piece)).join('') + (positions.length > pieces.length ? replacement : '');
  }
  const out: string[] = [];
  let from = 0;
  for (const at of positions) {
    out.push(text.slice(from, at), replacement);
    from = at + old.length;
  }
  out.push(text.slice(from));
  return out.join('');
}

/** The `replace` overloads, to use instead of the `strings` extension's. */
export const replaceFunctions: readonly CelFunc[] = [
  celMethod('replace', CelScalar.STRING, [CelScalar.STRING, CelScalar.STRING], CelScalar.STRING, function (this: string, old: string, replacement: string) {
    return replaceLinear(this, old, replacement, -1);
  }),
  celMethod('replace', CelScalar.STRING, [CelScalar.STRING, CelScalar.STRING, CelScalar.INT], CelScalar.STRING, function (this: string, old: string, replacement: string, limit: bigint) {
    return replaceLinear(this, old, replacement, Number(limit));
  }),
];
