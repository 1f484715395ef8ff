// A campaign's status change and what its running enrollments must hear of it (docs/executor.md,
// "The send-time rule"). The route and the Operator's tools both come here, so a pause always holds
// every enrollment at once, whichever way it was made.
import type { EntityManager } from '@mikro-orm/postgresql';
import { setStatus, type CampaignWithCount } from './campaigns.js';
import type { CampaignStatus } from '../../db/entities/Campaign.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { signalCampaignEnrollments } from '../enrollments/enrollments.js';

const SIGNAL: Partial<Record<CampaignStatus, 'campaign_resumed' | 'campaign_paused' | 'campaign_stopped'>> = {
  active: 'campaign_resumed',
  paused: 'campaign_paused',
  completed: 'campaign_stopped',
  archived: 'campaign_stopped',
};

/**
 * Changes the status (committed), then: on pause, the unsent actions say `campaign_paused` at once
 * (a review in progress keeps `awaiting_review`: it can still be decided); on resume that reason is
 * cleared for the workflows to set theirs again. Then every running enrollment is signalled, so one
 * waiting on a timer (a window, the governor's gap) runs the gate now instead of at its wake-up.
 * The claim of each send reads the status under lock, so nothing depends on these signals for safety.
 */
export async function changeCampaignStatus(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  id: string,
  to: CampaignStatus,
): Promise<CampaignWithCount> {
  const campaign = await setStatus(em, actor, id, to);
  if (to === 'paused') {
    await em.execute(
      `update scheduled_actions set waiting_reason = 'campaign_paused', waiting_until = null, updated_at = now()
        where campaign_id = ? and state in ('planned', 'approved') and waiting_reason is distinct from ?`,
      [campaign.id, 'campaign_paused'],
    );
  } else if (to === 'active') {
    // An enrollment paused on its own still says so; the others set their reason as they go on.
    await em.execute(
      `update scheduled_actions a set waiting_reason = case when e.status = 'paused' then 'paused' end, updated_at = now()
         from enrollments e where e.id = a.enrollment_id and a.campaign_id = ? and a.state in ('planned', 'approved') and a.waiting_reason = 'campaign_paused'`,
      [campaign.id],
    );
  }
  const signal = SIGNAL[to];
  if (signal) await signalCampaignEnrollments(em, jobs, campaign.id, signal);
  return campaign;
}
