// Custom search attributes every job carries, so the Temporal UI can filter by workspace, app and kind.
// Registered on the dev server by scripts/stack/temporal.ts (keyword type).
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const AppId = defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD);
export const JobKind = defineSearchAttributeKey('JobKind', SearchAttributeType.KEYWORD);

export function jobSearchAttributes(job: {
  kind: string;
  workspaceId?: string;
  appId?: string;
}): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: JobKind, value: job.kind },
    ...(job.workspaceId ? [{ key: WorkspaceId, value: job.workspaceId }] : []),
    ...(job.appId ? [{ key: AppId, value: job.appId }] : []),
  ]);
}
