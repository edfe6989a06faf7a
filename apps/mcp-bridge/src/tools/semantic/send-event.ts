import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';

/** The event inbox of the API (docs/guide/event-triggers.md). */
const EVENTS = '/api/v1/events';

export const sendEvent = defineTool({
  name: 'send_event',
  title: 'Send an event',
  description:
    'Posts an event (e.g. `order.created` with its data) to Switchyard: every enabled workflow with a matching trigger (its event name, ' +
    'and its filterCel over `event.data`) starts one run, with the trigger\'s inputCel map or the data as input. Returns `eventId` and ' +
    '`runIds` (empty when nothing matched; why a trigger did not fire is recorded on the event, GET /api/v1/events). Give `id` to make ' +
    'a retry safe: a repeat of your id with the same name and data within 24 h returns the first answer and starts nothing (other name or ' +
    'data: a conflict error). Needs the events-write scope.',
  kind: 'launch',
  input: z.object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/)
      .describe('Event name, e.g. "order.created": a letter or digit, then letters, digits and . _ : - (at most 200)'),
    data: z.record(z.string(), z.unknown()).optional().describe('The event payload (a JSON object; default {}); at most 256 KiB with the rest of the event'),
    id: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[\x20-\x7e]+$/)
      .optional()
      .describe('Your id of the event (printable ASCII): a repeat with the same name and data within 24 h is answered from the first and starts no run'),
  }),
  output: z.object({
    eventId: z.string().describe('The stored event'),
    runIds: z.array(z.string()).describe('The runs it started (follow them with get_run or watch_run)'),
  }),
  async run(args, { api }) {
    const body = { name: args.name, ...(args.data === undefined ? {} : { data: args.data }), ...(args.id === undefined ? {} : { id: args.id }) };
    return api.post<{ eventId: string; runIds: string[] }>(EVENTS, body);
  },
});
