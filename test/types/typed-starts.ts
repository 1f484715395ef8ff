// Checked by tsc (npm test's typecheck), never run: the Temporal boundary's starts are typed by the
// workflow registry (docs/architecture.md, "A new workflow"). Each `@ts-expect-error` fails the
// typecheck the day that line compiles, i.e. the day a start could name an unregistered workflow or
// pass it arguments of the wrong shape.
import type { Client } from '@temporalio/client';
import { startOnce } from '../../jobs/temporal.js';
import type * as workflows from '../../workflows/index.js';
import { jobSearchAttributes } from '../../workflows/search-attributes.js';

export async function typedStarts(client: Client): Promise<void> {
  const base = { taskQueue: 'q', workflowId: 'w' };
  await startOnce(client, 'listImport', { ...base, args: [{ importId: 'i' }] });
  // @ts-expect-error an unregistered workflow type
  await startOnce(client, 'listImports', { ...base, args: [{ importId: 'i' }] });
  // @ts-expect-error arguments of another shape than the workflow function's
  await startOnce(client, 'listImport', { ...base, args: [{ import_id: 'i' }] });
  // @ts-expect-error a missing argument
  await startOnce(client, 'bulkEnroll', { ...base, args: [] });
}

// The other starts are typed the same way: Schedules (workers/schedules.ts `Recurring`: the id names a
// registered workflow, the args are its function's), the agent Schedules, the webhook dispatcher's
// starts and the inbox wake-up's signal-with-start (generic on the workflow function).

export async function typedOtherStarts(client: Client): Promise<void> {
  const base = { taskQueue: 'q', workflowId: 'w' };
  await client.workflow.start<typeof workflows.deliverWebhookEvent>('deliverWebhookEvent', {
    ...base,
    args: [{ eventId: 'e', workspaceId: 'w' }],
  });
  // @ts-expect-error the dispatcher's start with arguments of another shape
  const bad: Parameters<typeof workflows.deliverWebhookEvent> = [{ event_id: 'e' }];
  await client.workflow.start<typeof workflows.deliverWebhookEvent>('deliverWebhookEvent', { ...base, args: bad });
  const scheduled: Parameters<typeof workflows.scheduledDiscovery> = [{ agentId: 'a', workspaceId: 'w' }];
  // @ts-expect-error an agent Schedule's arguments of another shape
  const wrong: Parameters<typeof workflows.scheduledDiscovery> = [{ agent: 'a' }];
  void [scheduled, wrong];
}

// The JobKind search attribute takes the declared kinds only (workflows/search-attributes.ts JOB_KINDS).
export const kinds = [
  jobSearchAttributes({ kind: 'enrollment' }),
  // @ts-expect-error an invented job kind
  jobSearchAttributes({ kind: 'enrolment' }),
];
