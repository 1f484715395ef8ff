// The MCP approval workflow's activity (domain/mcp/approvals.ts settleApproval): runs an approved
// call as its user, with the tool context the Operator's activities use (jobs, model, sources).
import type { EntityManager } from '@mikro-orm/postgresql';
import { temporalJobs } from '../jobs/temporal.js';
import { settleApproval } from '../domain/mcp/approvals.js';
import type { Jobs } from '../domain/jobs.js';
import { createModelAdapter } from '../lib/llm/index.js';
import { createSources } from '../lib/sources/index.js';
import { connectTemporal } from '../lib/temporal.js';
import type { ActivityDeps } from './index.js';

export function createMcpApprovalActivities(deps: ActivityDeps) {
  let jobs: Promise<Jobs> | undefined;
  let llm: ReturnType<typeof createModelAdapter> | undefined;
  let sources: ReturnType<typeof createSources> | undefined;
  return {
    async settleMcpApproval(input: { approvalId: string }): Promise<string> {
      jobs ??= deps.jobs ? Promise.resolve(deps.jobs) : connectTemporal(deps.config).then((c) => temporalJobs(c, deps.config.temporal.taskQueue));
      llm ??= createModelAdapter(deps.config.llm);
      sources ??= createSources(deps.config.sources);
      return settleApproval(deps.orm.em.fork() as EntityManager, { jobs: await jobs, llm, providers: { llm, sources } }, input.approvalId);
    },
  };
}

export type McpApprovalActivities = ReturnType<typeof createMcpApprovalActivities>;
