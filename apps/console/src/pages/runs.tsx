/** The run list across workflows (issue #19 item 3). Filled in by the runs page work. */
import { PageTitle } from '../ui.tsx';

/** `#/runs` */
export function RunsPage() {
  return <PageTitle>Runs</PageTitle>;
}
