/**
 * Path parameter schemas. Ids are 24-hex strings; a malformed one fails validation and the error
 * handler answers 400 "Invalid <x> ID".
 */
import Type from 'typebox';
import { NODE_ID_PATTERN, objectIdString as id } from '@switchyard/domain';

export const WorkflowParams = Type.Object({ workflow_id: id('Workflow definition id') });
export const RunParams = Type.Object({ workflow_id: id('Workflow definition id'), run_id: id('Run id') });
export const NodeRunParams = Type.Object({
  workflow_id: id('Workflow definition id'),
  run_id: id('Run id'),
  node_run_id: id('Node run id'),
});

/** A node of a run's definition (`node_id`: the WorkflowNode.id, not a 24-hex id). */
export const NodeParams = Type.Object({
  workflow_id: id('Workflow definition id'),
  run_id: id('Run id'),
  node_id: Type.String({ pattern: NODE_ID_PATTERN.source, description: 'WorkflowNode.id from the definition' }),
});

/** A run addressed without its workflow (`/api/v1/runs/{run_id}`). */
export const RunIdParams = Type.Object({ run_id: id('Run id') });

/**
 * The `Idempotency-Key` header of every request that starts a run (trigger, retry, replay, node
 * rerun; services/idempotency.ts): 1-255 printable ASCII characters.
 */
export const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });
