/** A run's lineage: the run it was started from, and the runs started from it. */
import { href } from '../../router.ts';
import { Status, formatTime } from '../../ui.tsx';
import type { RunSummary } from './types.ts';

/** Parent link and child list (retries, replays, node reruns). */
export function Lineage({ parentRunId, children, childTotal }: { parentRunId: string | null; children: RunSummary[] | undefined; childTotal: number }) {
  return (
    <section class="panel" aria-labelledby="run-lineage-title">
      <h2 id="run-lineage-title">Lineage</h2>
      <p>
        Parent run:{' '}
        {parentRunId ? (
          <a class="mono" href={href(['runs', parentRunId])}>
            {parentRunId}
          </a>
        ) : (
          <span class="muted">none (started directly)</span>
        )}
      </p>
      {children === undefined ? (
        <p class="muted">Loading child runs…</p>
      ) : children.length === 0 ? (
        <p class="muted">No child runs.</p>
      ) : (
        <>
          <p>
            Child runs ({childTotal}
            {childTotal > children.length ? `, newest ${children.length} shown` : ''}):
          </p>
          <ul class="child-runs">
            {children.map((child) => (
              <li key={child.id}>
                <a class="mono" href={href(['runs', child.id])}>
                  {child.id}
                </a>{' '}
                <Status status={child.status} /> {child.triggerSource}, {formatTime(child.startedAt)}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
