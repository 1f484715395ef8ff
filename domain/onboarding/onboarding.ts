// Onboarding progress (docs/ideas-views-onboarding.md): derived from what the workspace holds now,
// never from stored flags, so it cannot drift (delete the only product and "product created" is
// undone). One statement: one scalar subquery per step, each answered from an index (the earliest
// row's time, or null when there is none).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../identity.js';

export const ONBOARDING_STEPS = [
  'product_created',
  'agent_created',
  'account_connected',
  'list_imported',
  'campaign_activated',
  'first_reply',
] as const;
export type OnboardingStep = (typeof ONBOARDING_STEPS)[number];

export const STEP_LABELS: Record<OnboardingStep, string> = {
  product_created: 'Create a product',
  agent_created: 'Create a discovery agent',
  account_connected: 'Connect a sender account',
  list_imported: 'Import a list (or get leads into one)',
  campaign_activated: 'Activate a campaign',
  first_reply: 'Get a first reply',
};

export interface OnboardingProgress {
  steps: { step: OnboardingStep; label: string; done: boolean; done_at: Date | null }[];
  completed: number;
  total: number;
  percent: number;
  /** The first step not done, in the order above (null when all are). */
  next_step: OnboardingStep | null;
}

/**
 * The workspace's progress. Each step is done when its rows exist, at the earliest one's time:
 * - product_created: a product (`apps.created_at`);
 * - agent_created: a discovery agent, archived ones included (`discovery_agents.created_at`);
 * - account_connected: a sender account connected now (`platform_accounts.connected_at`; a
 *   disconnection undoes the step until one is connected again);
 * - list_imported: a list with at least one lead, imported, discovered or added (the time of each
 *   list's first lead by id: leads_list_id_id_index answers it in one probe per list);
 * - campaign_activated: a campaign that was ever activated (`campaigns.activated_at`);
 * - first_reply: a lead's reply in the inbox (not an auto-reply or bounce, not synced history) or an
 *   enrollment marked replied, whichever came first (two partial indexes holding replies only).
 */
export async function onboardingProgress(
  em: EntityManager,
  actor: Pick<Actor, 'workspaceId'>,
): Promise<OnboardingProgress> {
  const ws = actor.workspaceId;
  const [row] = await em.execute<Record<OnboardingStep, Date | string | null>[]>(
    `select
       (select min(created_at) from apps where workspace_id = ?) as product_created,
       (select min(created_at) from discovery_agents where workspace_id = ?) as agent_created,
       (select min(connected_at) from platform_accounts where workspace_id = ? and status = 'connected') as account_connected,
       (select min(f.created_at) from lead_lists ll
          cross join lateral (select l.created_at from leads l where l.list_id = ll.id order by l.id limit 1) f
         where ll.workspace_id = ?) as list_imported,
       (select min(activated_at) from campaigns where workspace_id = ? and activated_at is not null) as campaign_activated,
       least(
         (select min(sent_at) from inbox_messages where workspace_id = ? and kind = 'reply' and lead_id is not null and not historical),
         (select min(replied_at) from enrollments where workspace_id = ? and replied_at is not null)
       ) as first_reply`,
    [ws, ws, ws, ws, ws, ws, ws],
  );
  const steps = ONBOARDING_STEPS.map((step) => {
    const at = row[step];
    return { step, label: STEP_LABELS[step], done: at !== null, done_at: at === null ? null : new Date(at) };
  });
  const completed = steps.filter((s) => s.done).length;
  return {
    steps,
    completed,
    total: steps.length,
    percent: Math.round((completed / steps.length) * 100),
    next_step: steps.find((s) => !s.done)?.step ?? null,
  };
}
