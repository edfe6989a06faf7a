/** One run, live (issue #19 item 3). Filled in by the runs page work. */
import { PageTitle } from '../ui.tsx';

/** `#/runs/<id>` */
export function RunPage({ runId }: { runId: string }) {
  return <PageTitle>Run {runId}</PageTitle>;
}
