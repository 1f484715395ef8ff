// The MCP approval workflow's activity (domain/mcp/approvals.ts settleApproval): runs an approved
// call as its user, with the tool context the Operator's activities use (jobs, model, sources).
import type { EntityManager } from '@mikro-orm/postgresql';
import { settleApproval } from '../domain/mcp/approvals.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

export function createMcpActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  return {
    async settleMcpApproval(input: { approvalId: string }): Promise<string> {
      return settleApproval(
        deps.orm.em.fork() as EntityManager,
        { jobs: deps.jobs, config: deps.config, providers },
        input.approvalId,
      );
    },
  };
}

export type McpActivities = ReturnType<typeof createMcpActivities>;
