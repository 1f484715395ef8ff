// The Temporal side of domain/jobs.ts: business-key workflow ids, search attributes, memo.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Jobs } from '../domain/jobs.js';
import { discoveryWorkflowIds } from '../workflows/ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';

export function temporalJobs(client: Client, taskQueue: string): Jobs {
  return {
    async startDiscoveryRun(plan) {
      try {
        await client.workflow.start('discoveryRun', {
          taskQueue,
          workflowId: discoveryWorkflowIds.run(plan.agentId, plan.runId),
          args: [{ plan }],
          typedSearchAttributes: jobSearchAttributes({ kind: 'discovery-run', workspaceId: plan.workspaceId, appId: plan.appId }),
          memo: { agent: plan.agentId, signals: plan.signals.map((s) => s.key) },
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err; // a repeated launch
      }
    },
  };
}
