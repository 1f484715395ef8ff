// Custom search attributes every job carries, so the Temporal UI can filter by workspace, app and kind.
// Registered on the dev server by scripts/stack/temporal.ts (keyword type).
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const AppId = defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD);
export const JobKind = defineSearchAttributeKey('JobKind', SearchAttributeType.KEYWORD);

/**
 * Every value of the `JobKind` search attribute (what an operator filters by in the Temporal UI): a
 * literal union, so a start cannot invent one.
 */
export const JOB_KINDS = [
  'accounts',
  'analytics',
  'booking-backfill',
  'booking-event',
  'bulk-enroll',
  'cdm-import',
  'connector',
  'connector-event',
  'contacts-export',
  'credits',
  'discovery-run',
  'discovery-schedule',
  'drafts',
  'enrichment',
  'enrollment',
  'inbox',
  'inbox-inbound',
  'inbox-reply',
  'inbox-sync',
  'insights',
  'list-import',
  'mailbox-sync',
  'maintenance',
  'mcp-approval',
  'notifications',
  'operator-task',
  'operator-turn',
  'partner-sync',
  'promote-profiles',
  'webhook-batch',

  'webhook-event',
] as const;
export type JobKindName = (typeof JOB_KINDS)[number];

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
