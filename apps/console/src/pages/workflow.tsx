/** One workflow: its graph and runs (issue #19 item 2). Filled in by the graph page work. */
import { PageTitle } from '../ui.tsx';

/** `#/workflows/<id>?run=<runId>` */
export function WorkflowPage({ workflowId }: { workflowId: string; runId: string | null }) {
  return <PageTitle>Workflow {workflowId}</PageTitle>;
}
