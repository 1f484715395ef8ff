// Checked by tsc (npm test's typecheck), never run: the Temporal boundary is typed from the job
// declarations (docs/architecture.md, "Add a long-running job"). Each `@ts-expect-error` fails the
// typecheck the day that line compiles, i.e. the day a start could name an undeclared job, pass it
// the wrong input, a declaration could drift from its workflow function, or a kind go undeclared.
import type { Client } from '@temporalio/client';
import type { Jobs } from '../../domain/jobs.js';
import { startOnce, type UndeclaredKinds } from '../../jobs/temporal.js';
import { defineJob, defineSchedule } from '../../workflows/job.js';
import { purgeNotifications } from '../../workflows/notifications.js';
import { listImport } from '../../workflows/lists.js';
import type * as workflows from '../../workflows/index.js';
import { jobSearchAttributes } from '../../workflows/search-attributes.js';

export async function typedJobs(jobs: Jobs): Promise<void> {
  await jobs.start('list-import', { importId: 'i', workspaceId: 'w', appId: 'a' });
  // @ts-expect-error an undeclared job kind
  await jobs.start('list-imports', { importId: 'i', workspaceId: 'w', appId: 'a' });
  // @ts-expect-error an input of another shape than the kind's
  await jobs.start('list-import', { import_id: 'i', workspaceId: 'w', appId: 'a' });
  // @ts-expect-error enrollments start in batches only (startEnrollments)
  await jobs.start('enrollment', {} as never as { campaignId: string });
  await jobs.signal('list-import', { importId: 'i' }, 'cancel');
  // @ts-expect-error a signal the job does not declare
  await jobs.signal('list-import', { importId: 'i' }, 'pause');
  // @ts-expect-error a key of another job
  await jobs.signal('list-import', { taskId: 't' }, 'cancel');
  const progress = await jobs.query('promote-profiles', { agentId: 'a', operationId: 'o' }, 'progress');
  void progress?.promoted;
  // @ts-expect-error a query the job does not declare
  await jobs.query('promote-profiles', { agentId: 'a', operationId: 'o' }, 'state');
}

// A declaration's arguments are its workflow function's; its kind is the port's; its signals are all there.
const base = {
  id: (k: { importId: string }) => k.importId,
  scope: () => ({}),
  memo: () => ({}),
  repeat: 'while-open' as const,
  signals: { cancel: {} as never },
};
export const declared = defineJob('list-import', {
  ...base,
  workflow: listImport,
  args: (s) => [{ importId: s.importId }],
});
export const drifted = defineJob('list-import', {
  ...base,
  workflow: listImport,
  // @ts-expect-error arguments of another shape than the workflow function's
  args: (s) => [{ import_id: s.importId }],
});
// @ts-expect-error a kind the port does not declare
export const invented = defineJob('list-imports', { ...base, workflow: listImport, args: (s) => [{ importId: s }] });
export const silent = defineJob('list-import', {
  ...base,
  // @ts-expect-error a declared signal left out
  signals: undefined,
  workflow: listImport,
  args: (s) => [{ importId: s.importId }],
});

// A declaration not exported by workflows/index.ts leaves its kind undeclared, and jobs/temporal.ts
// (`everyJobDeclared`) does not compile; the same check, over the exports without one of them:
export const allDeclared: [UndeclaredKinds<typeof workflows>] extends [never] ? true : false = true;
// @ts-expect-error the list import's declaration missing from the exports
export const oneMissing: [UndeclaredKinds<Omit<typeof workflows, 'listImportJob'>>] extends [never] ? true : false =
  true;

// A Schedule's arguments are its workflow function's too (`defineSchedule`, collected by workers/schedules.ts).
const every = { id: 's', runs: 'r', kind: 'maintenance', every: { every: '1 hour' }, catchupWindow: '1 hour' } as const;
export const scheduled = defineSchedule({
  ...every,
  overlap: 'skip',
  description: 'd',
  workflow: purgeNotifications,
  args: [{ batch: 10 }],
});
export const misfired = defineSchedule({
  ...every,
  overlap: 'skip',
  description: 'd',
  workflow: purgeNotifications,
  // @ts-expect-error a Schedule's arguments of another shape than its workflow function's
  args: [{ batch: '10' }],
});

// The other starts are typed by the workflow function too: the agent Schedules and the webhook dispatcher's starts.
export async function typedOtherStarts(client: Client): Promise<void> {
  const opts = { taskQueue: 'q', workflowId: 'w' };
  await startOnce(client, 'listImport', { ...opts, args: [{ importId: 'i' }] });
  // @ts-expect-error an unregistered workflow type
  await startOnce(client, 'listImports', { ...opts, args: [{ importId: 'i' }] });
  await client.workflow.start<typeof workflows.deliverWebhookEvent>('deliverWebhookEvent', {
    ...opts,
    args: [{ eventId: 'e', workspaceId: 'w' }],
  });
  // @ts-expect-error the dispatcher's start with arguments of another shape
  const bad: Parameters<typeof workflows.deliverWebhookEvent> = [{ event_id: 'e' }];
  void bad;
  const scheduled: Parameters<typeof workflows.scheduledDiscovery> = [{ agentId: 'a', workspaceId: 'w' }];
  // @ts-expect-error an agent Schedule's arguments of another shape
  const wrong: Parameters<typeof workflows.scheduledDiscovery> = [{ agent: 'a' }];
  void [scheduled, wrong];
}

// The JobKind search attribute takes the declared kinds only (the port's JobTypes and OTHER_JOB_KINDS).
export const kinds = [
  jobSearchAttributes({ kind: 'enrollment' }),
  // @ts-expect-error an invented job kind
  jobSearchAttributes({ kind: 'enrolment' }),
];
