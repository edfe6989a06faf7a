/**
 * The controls a run's status allows: pause, resume, cancel with a reason, retry, replay, rerun a
 * node. Each shows its API error in place; a retry, replay or rerun goes to the child run.
 */
import { useState } from 'preact/hooks';
import { api, runPath } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { ErrorBox } from '../../ui.tsx';
import { flattenNodes } from './nodes.ts';
import { hasEnded, type RunDetail } from './types.ts';

/** What a control reports back: busy while its request runs, the error of the last try. */
interface ControlState {
  busy: boolean;
  error: unknown;
  message: string | null;
}

/** Runs `request` for one control, tracking busy/error/message. */
function useControl(): [ControlState, (request: () => Promise<string | null>) => Promise<void>] {
  const [state, setState] = useState<ControlState>({ busy: false, error: null, message: null });
  const run = async (request: () => Promise<string | null>) => {
    setState({ busy: true, error: null, message: null });
    try {
      const message = await request();
      setState({ busy: false, error: null, message });
    } catch (error) {
      setState({ busy: false, error, message: null });
    }
  };
  return [state, run];
}

/** The response of retry, replay and rerun. */
interface ChildRun {
  runId: string;
}

/** Starts a child run with POST …/`action` and goes to it. */
async function startChild(run: RunDetail, action: string, body?: unknown): Promise<string | null> {
  const child = await api<ChildRun>('POST', runPath(run.workflowDefinitionId, run.id, action), body);
  navigate(href(['runs', child.runId]));
  return null;
}

/** Pause, resume, cancel: POST …/`action`; the answer's message is shown, the stream does the rest. */
async function direct(run: RunDetail, action: 'pause' | 'resume' | 'cancel', body?: unknown): Promise<string | null> {
  const answer = await api<{ message: string }>('POST', runPath(run.workflowDefinitionId, run.id, `/${action}`), body);
  return answer.message;
}

/** A button that runs one control. */
function ControlButton({ label, busy, onClick, danger = false }: { label: string; busy: boolean; onClick: () => void; danger?: boolean }) {
  return (
    <button type="button" class={danger ? 'danger' : undefined} disabled={busy} onClick={onClick}>
      {label}
    </button>
  );
}

/** "Cancel run…": a small form with the reason. */
function CancelForm({ run, onDone }: { run: RunDetail; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const [state, control] = useControl();
  const id = `cancel-reason-${run.id}`;
  return (
    <form
      class="control-form"
      aria-label="Cancel the run"
      onSubmit={(event) => {
        event.preventDefault();
        void control(async () => {
          return direct(run, 'cancel', reason.trim() === '' ? {} : { reason: reason.trim() });
        });
      }}
    >
      <div class="field">
        <label for={id}>Reason</label>
        <input id={id} type="text" maxLength={2000} value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
      </div>
      <div class="control-row">
        <button type="submit" class="danger" disabled={state.busy}>
          Cancel run
        </button>
        <button type="button" onClick={onDone}>
          Keep running
        </button>
      </div>
      <ErrorBox error={state.error} />
    </form>
  );
}

/** "Rerun node…": pick a node of the run's definition snapshot, rerun it in a child run. */
function RerunForm({ run, onDone }: { run: RunDetail; onDone: () => void }) {
  const nodes = flattenNodes(run.definitionSnapshot?.nodes);
  const [nodeId, setNodeId] = useState(nodes[0]?.id ?? '');
  const [state, control] = useControl();
  const id = `rerun-node-${run.id}`;
  return (
    <form
      class="control-form"
      aria-label="Rerun a node"
      onSubmit={(event) => {
        event.preventDefault();
        if (nodeId) void control(() => startChild(run, `/nodes/${encodeURIComponent(nodeId)}/rerun`, {}));
      }}
    >
      <div class="field">
        <label for={id}>Node</label>
        <select id={id} value={nodeId} onChange={(event) => setNodeId((event.target as HTMLSelectElement).value)}>
          {nodes.map((node) => (
            <option key={node.id} value={node.id}>
              {`${'\u2003'.repeat(node.depth)}${node.name} (${node.nodeType}, ${node.id})`}
            </option>
          ))}
        </select>
      </div>
      <div class="control-row">
        <button type="submit" disabled={state.busy || nodeId === ''}>
          Rerun node
        </button>
        <button type="button" onClick={onDone}>
          Close
        </button>
      </div>
      <ErrorBox error={state.error} />
    </form>
  );
}

/** The run's controls, as its status allows them. */
export function RunControls({ run }: { run: RunDetail }) {
  const [state, control] = useControl();
  const [open, setOpen] = useState<'cancel' | 'rerun' | null>(null);
  const ended = hasEnded(run.status);
  const canPause = run.status === 'pending' || run.status === 'running' || run.status === 'awaiting_approval';
  return (
    <section class="panel run-controls" aria-labelledby="run-controls-title">
      <h2 id="run-controls-title">Controls</h2>
      <div class="control-row">
        {canPause && <ControlButton label="Pause" busy={state.busy} onClick={() => void control(() => direct(run, 'pause'))} />}
        {run.status === 'paused' && <ControlButton label="Resume" busy={state.busy} onClick={() => void control(() => direct(run, 'resume'))} />}
        {!ended && (
          <button type="button" class="danger" aria-expanded={open === 'cancel'} onClick={() => setOpen(open === 'cancel' ? null : 'cancel')}>
            Cancel run…
          </button>
        )}
        {ended && <ControlButton label="Retry" busy={state.busy} onClick={() => void control(() => startChild(run, '/retry'))} />}
        <ControlButton label="Replay" busy={state.busy} onClick={() => void control(() => startChild(run, '/replay'))} />
        {ended && (
          <button type="button" aria-expanded={open === 'rerun'} onClick={() => setOpen(open === 'rerun' ? null : 'rerun')}>
            Rerun node…
          </button>
        )}
      </div>
      {state.message && (
        <p class="muted" role="status">
          {state.message}
        </p>
      )}
      <ErrorBox error={state.error} />
      {open === 'cancel' && !ended && <CancelForm run={run} onDone={() => setOpen(null)} />}
      {open === 'rerun' && ended && <RerunForm run={run} onDone={() => setOpen(null)} />}
    </section>
  );
}
