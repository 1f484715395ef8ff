// The MCP approval workflow's activity (domain/mcp/approvals.ts settleApproval): runs an approved
// call as its user, with the tool context the Operator's activities use (jobs, model, sources).
import type { EntityManager } from '@mikro-orm/postgresql';
import { temporalJobs } from '../jobs/temporal.js';
import { settleApproval } from '../domain/mcp/approvals.js';
import type { Jobs } from '../domain/jobs.js';
import { connectTemporal } from '../lib/temporal.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './index.js';

export function createMcpActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  let jobs: Promise<Jobs> | undefined;
  return {
    async settleMcpApproval(input: { approvalId: string }): Promise<string> {
      jobs ??= deps.jobs ? Promise.resolve(deps.jobs) : connectTemporal(deps.config).then((c) => temporalJobs(c, deps.config.temporal.taskQueue));
      return settleApproval(deps.orm.em.fork() as EntityManager, { jobs: await jobs, config: deps.config, providers }, input.approvalId);
    },
  };
}

export type McpActivities = ReturnType<typeof createMcpActivities>;
