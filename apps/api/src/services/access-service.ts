/**
 * A workflow's access list (issue #18 item 2; domain access.ts): read it, replace it. Who may do
 * either is checked before (the route's `workflowRole`: viewer to read, owner to replace).
 */
import { NotFoundError, normalizeAccess, type Role, type WorkflowAccess, type WorkflowAccessBody } from '@switchyard/domain';
import type { AppServices } from './app-services.ts';

/** What `GET/PUT …/access` answer: the access and the caller's role on the workflow. */
export interface AccessView {
  workflowId: string;
  access: WorkflowAccess;
  callerRole: Role | null;
}

/** The access of workflow `workflowId`. 404 when it does not exist. */
export async function getAccess(services: AppServices, workflowId: string, callerRole: Role | null): Promise<AccessView> {
  const access = await services.repos.definitions.accessOf(workflowId);
  if (access === null) throw new NotFoundError('workflow');
  return { workflowId, access, callerRole };
}

/**
 * Replaces the access of workflow `workflowId` with `body` (lists de-duplicated, missing roles
 * empty). Returns the access before and after. 400 when `owners` is empty (a workflow always
 * keeps an owner); 404 when the workflow does not exist.
 */
export async function replaceAccess(services: AppServices, workflowId: string, body: WorkflowAccessBody): Promise<{ before: WorkflowAccess; after: WorkflowAccess }> {
  const changed = await services.repos.definitions.setAccess(workflowId, normalizeAccess(body), services.clock.now());
  if (changed === null) throw new NotFoundError('workflow');
  return changed;
}
