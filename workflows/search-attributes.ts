// Custom search attributes every job carries, so the Temporal UI can filter by workspace, app and kind.
// Registered on the dev server by scripts/stack/temporal.ts (keyword type).
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import type { JobKind as PortJobKind } from '../domain/jobs.js';

export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const AppId = defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD);
export const JobKind = defineSearchAttributeKey('JobKind', SearchAttributeType.KEYWORD);

/**
 * Kinds of the jobs not started through the Jobs port (whose kinds are domain/jobs.ts `JobTypes`):
 * the Schedules' runs, the agents' Schedules and the webhook dispatcher's workflows.
 */
export const OTHER_JOB_KINDS = [
  'accounts',
  'analytics',
  'connector',
  'credits',
  'discovery-schedule',
  'inbox',
  'insights',
  'maintenance',
  'notifications',
  'webhook-batch',
  'webhook-event',
] as const;
/** Every value of the `JobKind` search attribute (what an operator filters by in the Temporal UI): a literal union, so a start cannot invent one. */
export type JobKindName = PortJobKind | (typeof OTHER_JOB_KINDS)[number];

export function jobSearchAttributes(job: {
  kind: JobKindName;
  workspaceId?: string;
  appId?: string;
}): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: JobKind, value: job.kind },
    ...(job.workspaceId ? [{ key: WorkspaceId, value: job.workspaceId }] : []),
    ...(job.appId ? [{ key: AppId, value: job.appId }] : []),
  ]);
}
