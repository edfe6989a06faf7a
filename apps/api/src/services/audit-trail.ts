/**
 * The one writer of the workflow audit trail (issue #18 item 6; domain audit.ts for the
 * catalogue, docs/guide/audit.md). Every use case that changes a workflow's definition or access
 * calls {@link recordAudit} once the change is stored.
 *
 * A failed audit write is not swallowed: the change is already stored (the store has no
 * transaction spanning both), so the error is logged at `error` with the entry it lost (workflow,
 * type, actor, payload) and rethrown; the request answers 500, and the caller knows that the
 * change happened without its entry (the log line is the record of it).
 */
import type { Actor, AuditEntryOf, AuditEventType, AuditPayloads } from '@switchyard/domain';
import type { AppServices } from './index.ts';

/**
 * Appends a `type` entry about workflow `workflowId` made by `actor`, dated now (the services'
 * clock); returns the stored entry. `payload` is typed by the catalogue (`AuditPayloads[type]`).
 * Throws the store's error after logging it (see the module comment).
 */
export async function recordAudit<T extends AuditEventType>(
  services: Pick<AppServices, 'repos' | 'clock' | 'logger'>,
  workflowId: string,
  type: T,
  actor: Actor,
  payload: AuditPayloads[T],
): Promise<AuditEntryOf<T>> {
  const entry = { workflowId, type, actor, payload, createdAt: services.clock.now() };
  try {
    return await services.repos.audit.append(entry);
  } catch (error) {
    services.logger?.error({ err: error, audit: { workflowId, type, actor, payload } }, 'audit entry not stored: the change was made, its audit entry is lost');
    throw error;
  }
}
