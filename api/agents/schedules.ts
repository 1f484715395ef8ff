// Each active agent has a Temporal Schedule (`schedule:discovery:<agentId>`) that starts
// `scheduledDiscovery` at its interval: created when the agent is activated, paused with it,
// deleted when it is archived, deleted or set back to `off`. The interval is `config.schedule`
// (`hourly`, `daily` (default), `weekly` or `off`); `config` is otherwise stored as sent.
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { discoveryWorkflowIds } from '../../workflows/ids.js';
import { jobSearchAttributes } from '../../workflows/search-attributes.js';

export const INTERVALS = { hourly: '1 hour', daily: '1 day', weekly: '7 days' } as const;
export type Interval = keyof typeof INTERVALS | 'off';

export function intervalOf(config: unknown): Interval {
  const v = config && typeof config === 'object' && !Array.isArray(config) ? (config as Record<string, unknown>).schedule : undefined;
  return v === 'off' || v === 'hourly' || v === 'weekly' || v === 'daily' ? v : 'daily';
}

function definition(agent: IDiscoveryAgent, taskQueue: string, every: string): ScheduleOptions {
  return {
    scheduleId: discoveryWorkflowIds.schedule(agent.id),
    spec: { intervals: [{ every }] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    state: { paused: agent.status !== 'active' },
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledDiscovery',
      workflowId: discoveryWorkflowIds.scheduled(agent.id),
      taskQueue,
      args: [{ agentId: agent.id, workspaceId: agent.workspace.id }],
      typedSearchAttributes: jobSearchAttributes({ kind: 'discovery-schedule', workspaceId: agent.workspace.id, appId: agent.app.id }),
    },
    memo: { agent: agent.name },
  };
}

/** Brings the agent's Schedule in line with its status and interval (idempotent). */
export async function syncAgentSchedule(client: Client, taskQueue: string, agent: IDiscoveryAgent, deleted = false): Promise<void> {
  const handle = client.schedule.getHandle(discoveryWorkflowIds.schedule(agent.id));
  const interval = intervalOf(agent.config);
  const wanted = !deleted && interval !== 'off' && (agent.status === 'active' || agent.status === 'paused');
  if (!wanted) {
    await handle.delete().catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
    return;
  }
  const def = definition(agent, taskQueue, INTERVALS[interval]);
  try {
    await client.schedule.create(def);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    // One update carries the pause state too: a separate pause after an update could be applied
    // before it by the scheduler and then overwritten by the update's copy of the old state.
    const paused = agent.status !== 'active';
    await handle.update((prev) => ({
      ...prev,
      spec: def.spec,
      action: def.action,
      policies: def.policies,
      state: { ...prev.state, paused, note: paused ? 'agent paused' : 'agent active' },
    }));
  }
}

export interface NextLaunches {
  agent_id: string;
  scheduled: boolean;
  interval: Interval;
  paused: boolean;
  next_launches: string[];
}

/** The Schedule's next action times (none while paused or without a schedule). */
export async function nextLaunches(client: Client, agent: IDiscoveryAgent): Promise<NextLaunches> {
  const interval = intervalOf(agent.config);
  try {
    const d = await client.schedule.getHandle(discoveryWorkflowIds.schedule(agent.id)).describe();
    const paused = d.state.paused;
    return { agent_id: agent.id, scheduled: true, interval, paused, next_launches: paused ? [] : d.info.nextActionTimes.slice(0, 5).map((t) => t.toISOString()) };
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    return { agent_id: agent.id, scheduled: false, interval, paused: false, next_launches: [] };
  }
}
