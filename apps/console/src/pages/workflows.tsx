/** The workflow list (issue #19 item 1). Filled in by the workflows page work. */
import { PageTitle } from '../ui.tsx';

/** `#/workflows` */
export function WorkflowsPage() {
  return <PageTitle>Workflows</PageTitle>;
}
