import { Context } from '@temporalio/activity';
import { grantMonthlyCreditsPage } from '../domain/billing/plans.js';
import type { ActivityDeps } from './deps.js';

export function createBillingActivities(deps: ActivityDeps) {
  return {
    /** Grants `period`'s plan credits to every workspace (or the listed ones), page by page; idempotent. */
    async grantMonthlyCredits(input: {
      period: string;
      workspaceIds?: string[];
    }): Promise<{ workspaces: number; granted: number }> {
      const total = { workspaces: 0, granted: 0 };
      let afterId: string | null = (Context.current().info.heartbeatDetails as string | undefined) ?? null;
      do {
        const page = await grantMonthlyCreditsPage(deps.orm.em.fork(), input.period, {
          afterId,
          workspaceIds: input.workspaceIds,
        });
        total.workspaces += page.workspaces;
        total.granted += page.granted;
        afterId = page.lastId;
        if (afterId) Context.current().heartbeat(afterId); // a retry resumes after the last full page
      } while (afterId);
      return total;
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
