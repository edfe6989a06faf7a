import { defineBareDirective } from './run-actions.ts';

export const resumeRun = defineBareDirective('resume', {
  name: 'resume_run',
  title: 'Resume a run',
  description:
    'Resumes a paused run: it continues where it stopped (nothing completed runs again; decisions taken while paused are used; a gate ' +
    'still undecided puts it back to awaiting_approval), and its next steps call external tools and agents. A pause not yet honoured is ' +
    'withdrawn. Resuming a run that is not paused changes nothing (`changed: false`); an ended run is CONFLICT. Returns the API answer ' +
    '(status, message, changed, pendingDirective, stepsCompleted) and the run summary.',
  kind: 'launch',
});
