// Each active agent has a Temporal Schedule (`schedule:discovery:<agentId>`) that starts
// `scheduledDiscovery` at its interval: created when the agent is activated, paused with it,
// deleted when it is archived, deleted or set back to `off`. The interval is `config.schedule`
// (`hourly`, `daily` (default), `weekly` or `off`); `config` is otherwise stored as sent.
//
// Any process with a Temporal client applies it, through the Jobs port (jobs/temporal.ts
// `syncAgentSchedule`): domain/agents/agents.ts calls it after every committed agent change, from the API or
// the worker (Operator tools), and again when a read or a scheduled run finds the Schedule out of step.
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleOptions,
} from '@temporalio/client';
import type { IDiscoveryAgent } from '../db/entities/DiscoveryAgent.js';
import type { AgentScheduleState, NextLaunches } from '../domain/jobs.js';
import { discoveryWorkflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';
import type * as workflows from '../workflows/index.js';

export const INTERVALS = { hourly: '1 hour', daily: '1 day', weekly: '7 days' } as const;
const INTERVAL_MS = { hourly: 3_600_000, daily: 86_400_000, weekly: 604_800_000 } as const;
export type Interval = keyof typeof INTERVALS | 'off';

export function intervalOf(config: unknown): Interval {
  const v =
    config && typeof config === 'object' && !Array.isArray(config)
      ? (config as Record<string, unknown>).schedule
      : undefined;
  return v === 'off' || v === 'hourly' || v === 'weekly' || v === 'daily' ? v : 'daily';
}

function definition(agentId: string, agent: AgentScheduleState, taskQueue: string, every: string): ScheduleOptions {
  // The workflow it starts, typed by the registry: a renamed workflow or other arguments fail tsc.
  const args: Parameters<typeof workflows.scheduledDiscovery> = [{ agentId, workspaceId: agent.workspaceId }];
  const workflowType: keyof typeof workflows = 'scheduledDiscovery';
  return {
    scheduleId: discoveryWorkflowIds.schedule(agentId),
    spec: { intervals: [{ every }] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    state: { paused: agent.status !== 'active', note: agent.status !== 'active' ? 'agent paused' : 'agent active' },
    action: {
      type: 'startWorkflow',
      workflowType,
      workflowId: discoveryWorkflowIds.scheduled(agentId),
      taskQueue,
      args,
      typedSearchAttributes: jobSearchAttributes({
        kind: 'discovery-schedule',
        workspaceId: agent.workspaceId,
        appId: agent.appId,
      }),
    },
    memo: { agent: agent.name },
  };
}

/** Whether the agent (null: gone) should have a Schedule at all. */
function wanted<A extends { status: string; config: unknown }>(agent: A | null): agent is A {
  return (
    agent !== null && intervalOf(agent.config) !== 'off' && (agent.status === 'active' || agent.status === 'paused')
  );
}

/** Brings the agent's Schedule in line with its status and interval (idempotent); `agent` null: the agent is gone. */
export async function syncAgentSchedule(
  client: Client,
  taskQueue: string,
  agentId: string,
  agent: AgentScheduleState | null,
): Promise<void> {
  const handle = client.schedule.getHandle(discoveryWorkflowIds.schedule(agentId));
  if (!wanted(agent)) {
    await handle.delete().catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
    return;
  }
  const def = definition(agentId, agent, taskQueue, INTERVALS[intervalOf(agent.config) as keyof typeof INTERVALS]);
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

/** Whether a Schedule (null: none) is what the agent asks for: exists when wanted, with its pause state and interval. */
export function inStep(agent: Pick<IDiscoveryAgent, 'status' | 'config'>, d: ScheduleDescription | null): boolean {
  const want = wanted({ status: agent.status as string, config: agent.config });
  if (!want || d === null) return want === (d !== null);
  const interval = intervalOf(agent.config) as keyof typeof INTERVAL_MS;
  return d.state.paused === (agent.status !== 'active') && d.spec.intervals?.[0]?.every === INTERVAL_MS[interval];
}

/**
 * The Schedule's next action times (none while paused or without a schedule). When the Schedule is
 * not what the agent asks for (a sync after a change was lost), `repair` syncs it first and the
 * answer is read again: a status read converges.
 */
export async function nextLaunches(
  client: Client,
  agent: IDiscoveryAgent,
  repair?: () => Promise<unknown>,
): Promise<NextLaunches> {
  const interval = intervalOf(agent.config);
  const handle = client.schedule.getHandle(discoveryWorkflowIds.schedule(agent.id));
  const read = () =>
    handle.describe().catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      return null;
    });
  let d = await read();
  if (repair && !inStep(agent, d)) {
    await repair();
    d = await read();
  }
  if (!d) return { agent_id: agent.id, scheduled: false, interval, paused: false, next_launches: [] };
  const paused = d.state.paused;
  return {
    agent_id: agent.id,
    scheduled: true,
    interval,
    paused,
    next_launches: paused ? [] : d.info.nextActionTimes.slice(0, 5).map((t) => t.toISOString()),
  };
}
