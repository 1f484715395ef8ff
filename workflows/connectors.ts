import { proxyActivities } from '@temporalio/workflow';
import { defineJob, defineSchedule } from './job.js';
import { connectorWorkflowIds } from '../lib/workflow-ids.js';
import type { ConnectorActivities } from '../activities/connectors.js';

const { handleConnectorEvent: handle, deliverSandboxEvents: deliver } = proxyActivities<ConnectorActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

/** `connector-event:<eventId>`: handles one stored inbound connector event by its type. */
export async function handleConnectorEvent(input: { eventId: string }): Promise<{ type: string; outcome: string }> {
  return handle(input.eventId);
}

/** Run every minute by a Schedule when the connector is the sandbox: hands due sandbox events over. */
export async function deliverSandboxEvents(): Promise<{ delivered: number }> {
  return deliver();
}

export const connectorEventJob = defineJob('connector-event', {
  workflow: handleConnectorEvent,
  id: (k) => connectorWorkflowIds.event(k.eventId),
  args: (s) => [{ eventId: s.eventId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ event_id: s.eventId, type: s.type }),
  repeat: 'never-again',
});

export const deliverSandboxEventsSchedule = defineSchedule({
  id: 'schedule:deliver-sandbox-events',
  runs: 'sandbox:deliver-due',
  workflow: deliverSandboxEvents,
  args: [],
  kind: 'connector',
  every: { every: '1 minute' },
  catchupWindow: '1 minute',
  overlap: 'skip',
  sandboxOnly: true,
  description: 'Hands the sandbox network’s due inbound events (acceptances, replies) to the inbound pipeline',
});
