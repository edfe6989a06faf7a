import { defineBareDirective } from './run-actions.ts';

export const pauseRun = defineBareDirective('pause', {
  name: 'pause_run',
  title: 'Pause a run',
  description:
    'Pauses a run that has not ended: no node starts any more; nodes already executing finish first (until then the answer says ' +
    '`status: running, pendingDirective: pause`), then the run is `paused`. A run waiting at a human gate pauses at once; its gates ' +
    'can still be decided, but it goes on only after resume_run. Pausing a paused run changes nothing (`changed: false`); an ended ' +
    'run is CONFLICT. Returns the API answer (status, message, changed, pendingDirective, stepsCompleted) and the run summary.',
  kind: 'write',
});
