/**
 * Iteration paths: where inside a run's loops (and review rounds) a node executes. With the run
 * and the node id, the path keys a node run (DESIGN.md "memoized re-traversal"); gate keys and
 * step ids add it too (hitl.ts `gateKeyOf`, `stepIdOf`).
 *
 * Grammar (segments outermost first):
 *
 *     path      = '' | segment *( '/' segment )
 *     segment   = iteration [ 'r' round ]     ; a loop iteration, re-run in review round `round`
 *               | 'r' round                    ; a router's branches, re-run in review round `round`
 *     iteration = 1-based loop iteration, decimal without leading zeros
 *     round     = review round >= 1, decimal without leading zeros (round 0 writes no `r`)
 *
 * - `''`: outside loops.
 * - `3`: the third iteration of the enclosing loop; a nested loop's iteration `2/1`.
 * - `3r1`: iteration 3 re-run after its iteration review rejected it once (onReject `retry`).
 * - `r2`: the branches of a router re-run after its output review rejected them twice; the
 *   segment follows the router's own path (`2/r1` inside a loop). Round 0 runs them at the
 *   router's path itself.
 */

/** One segment of an iteration path, parsed. */
export interface PathSegment {
  /** The 1-based loop iteration; null for a router's review-round segment (`r<n>`). */
  iteration: number | null;
  /** The review round: 0 for the first run. */
  round: number;
}

/** The segment of loop iteration `iteration` (1-based) in review round `round`: `3`, or `3r1` for a re-run. */
export function iterationSegment(iteration: number, round: number): string {
  return round === 0 ? String(iteration) : `${iteration}r${round}`;
}

/** The segment under which a router's branches re-run in review round `round` (>= 1): `r<round>`. */
export function routerRoundSegment(round: number): string {
  return `r${round}`;
}

/** The path of `segment` inside `parent`: `parent/segment`, or `segment` alone at the top (`parent` ''). */
export function childIterationPath(parent: string, segment: string): string {
  return parent ? `${parent}/${segment}` : segment;
}

const SEGMENT = /^(?:([1-9]\d*)(?:r([1-9]\d*))?|r([1-9]\d*))$/;

/** Parses one segment (`3` -> iteration 3, round 0; `3r1` -> 3, 1; `r2` -> null, 2); null when it is not one. */
export function parsePathSegment(segment: string): PathSegment | null {
  const match = SEGMENT.exec(segment);
  if (!match) return null;
  const [, iteration, iterationRound, routerRound] = match;
  return iteration === undefined ? { iteration: null, round: Number(routerRound) } : { iteration: Number(iteration), round: Number(iterationRound ?? 0) };
}
