/**
 * What a caller may see in lists (issue #18 item 2): the workflows some role of which names one
 * of its principals or `*`. Lists filter in the store query (index `access_created` on
 * definitions, `workflow_recent` on runs), so `total` and pages count only what the caller may
 * see — never rows dropped from a page.
 */
import { roleOf, type Role, type WorkflowAccess } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import { isAdmin, principalsOf, type CallerIdentity } from '../auth/identity.ts';

/**
 * The ids of the workflows `identity` may see; undefined when it may see every one (an admin, or
 * no authentication). One indexed read of definition ids.
 */
export async function visibleWorkflowIds(repos: Pick<Repositories, 'definitions'>, identity: CallerIdentity): Promise<string[] | undefined> {
  return isAdmin(identity) ? undefined : repos.definitions.visibleIds(principalsOf(identity));
}

/** The role `identity` holds on a workflow with `access` (admins and callers without authentication: owner). */
export function roleOn(identity: CallerIdentity, access: WorkflowAccess | undefined): Role | null {
  if (isAdmin(identity)) return 'owner';
  return access === undefined ? null : roleOf(access, principalsOf(identity));
}
