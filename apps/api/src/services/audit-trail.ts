/**
 * The one writer of the workflow audit trail (issue #18 item 6; domain audit.ts for the
 * catalogue, docs/guide/audit.md). Every use case that changes a workflow's definition or access
 * calls {@link recordAudit} once the change is stored.
 *
 * A creation stores its entry inside the new definition's own write (the audit outbox,
 * store repositories/workflow-audit.ts): a refused write stores neither, so a client that sees 503
 * may retry. {@link flushAuditOutbox} moves such pending entries to the trail; {@link recordAudit}
 * moves them first, so the trail keeps its order.
 *
 * The other changes append their entry after the change is stored (the store has no transaction
 * spanning both). A failed audit write there is not swallowed: the error is logged at `error` with
 * the entry it lost (workflow, type, actor, payload) and rethrown; the request answers 500 (503 when
 * the store is unavailable), and the caller knows that the change happened without its entry (the
 * log line is the record of it). Retrying those changes is harmless: a PUT or toggle that changes
 * nothing records nothing.
 */
import type { Actor, AuditEntryOf, AuditEventType, AuditPayloads } from '@switchyard/domain';
import type { AppServices } from './app-services.ts';

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
    await services.repos.audit.flushOutbox(workflowId);
    return await services.repos.audit.append(entry);
  } catch (error) {
    services.logger?.error({ err: error, audit: { workflowId, type, actor, payload } }, 'audit entry not stored: the change was made, its audit entry is lost');
    throw error;
  }
}

/**
 * Moves the audit entries pending in workflow `workflowId`'s outbox to the trail (after a
 * creation, before the trail is read). Never throws: an entry that cannot be moved now stays
 * pending on the definition, logged at `warn`, and the next change, read of the trail, or deletion
 * of the workflow moves it.
 */
export async function flushAuditOutbox(services: Pick<AppServices, 'repos' | 'logger'>, workflowId: string): Promise<void> {
  try {
    await services.repos.audit.flushOutbox(workflowId);
  } catch (error) {
    services.logger?.warn({ err: error, workflowId }, 'audit entry kept pending on the workflow: moving it to the trail failed; it moves at the next change or read of the trail');
  }
}
