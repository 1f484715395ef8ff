// Checked by tsc (npm test's typecheck), never run: the Temporal boundary's starts are typed by the
// workflow registry (docs/architecture.md, "A new workflow"). Each `@ts-expect-error` fails the
// typecheck the day that line compiles, i.e. the day a start could name an unregistered workflow or
// pass it arguments of the wrong shape.
import type { Client } from '@temporalio/client';
import { startOnce } from '../../jobs/temporal.js';

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
