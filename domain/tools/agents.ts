// Discovery's actions for the Operator: list and read products and agents, change an agent's status
// and signals. (Launching runs and reading funnels join when discovery runs land.)
import { z } from 'zod';
import { AGENT_STATUSES, type IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { listApps, requireApp } from '../apps/apps.js';
import { listAgents, listSignals, replaceSignals, requireAgent, SIGNAL_KINDS, updateAgent } from '../agents/agents.js';
import { defineTool } from './registry.js';
import { createRun, funnel, planRun, recentRuns } from '../agents/discovery.js';
import { uuidv7 } from '../../lib/ids.js';

const agentSummary = (a: IDiscoveryAgent) => ({
  id: a.id,
  name: a.name,
  status: a.status as string,
  app_id: a.app.id,
  max_signals: a.maxSignals ?? null,
});

export const agentTools = [
  defineTool({
    name: 'list_products',
    domain: 'apps',
    description: 'List the products (apps) of the workspace that you can access, with their ideal customer profile.',
    input: z.object({}).strict(),
    risk: 'read',
    run: async ({ em, actor }) =>
      (await listApps(em, actor, { limit: 200 })).map((a) => ({
        id: a.id,
        name: a.name,
        icp_description: a.icpDescription ?? null,
      })),
  }),
  defineTool({
    name: 'list_agents',
    ids: { app_id: 'app' },
    domain: 'agents',
    description: 'List the discovery agents of a product, optionally only those with a given status.',
    input: z.object({ app_id: z.uuid(), status: z.enum(AGENT_STATUSES).optional() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      await requireApp(em, actor, input.app_id);
      return (await listAgents(em, actor, input.app_id, { limit: 200, status: input.status })).map(agentSummary);
    },
  }),
  defineTool({
    name: 'get_agent',
    ids: { agent_id: 'agent' },
    domain: 'agents',
    description: 'Read one discovery agent: its ICP, settings and signals.',
    input: z.object({ agent_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const a = await requireAgent(em, actor, input.agent_id);
      const signals = await listSignals(em, a.id);
      return {
        ...agentSummary(a),
        icp_description: a.icpDescription ?? null,
        require_current_employer: a.requireCurrentEmployer,
        signals: signals.map((s) => ({
          key: s.key,
          kind: s.kind,
          name: s.name,
          keywords: s.keywords,
          enabled: s.enabled,
        })),
      };
    },
  }),
  defineTool({
    name: 'set_agent_status',
    ids: { agent_id: 'agent' },
    domain: 'agents',
    description:
      'Activate, pause or archive a discovery agent (draft → active, active ⇄ paused, any → archived, archived → paused).',
    input: z.object({ agent_id: z.uuid(), status: z.enum(AGENT_STATUSES) }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) => {
      // The agent's Schedule is synced through `jobs` from the process running the tool (the worker).
      const r = await updateAgent(em, actor, jobs, input.agent_id, { status: input.status });
      return { ...agentSummary(r.agent), simulated: r.simulated };
    },
  }),
  defineTool({
    name: 'set_agent_signals',
    ids: { agent_id: 'agent' },
    domain: 'agents',
    description:
      'Replace the signals of a discovery agent (what indicates a lead: keywords in posts, job changes, hiring, funding, company events, people matching the ICP).',
    input: z
      .object({
        agent_id: z.uuid(),
        signals: z
          .array(
            z
              .object({
                key: z.string().max(100).optional(),
                kind: z.enum(SIGNAL_KINDS),
                name: z.string().min(1).max(200),
                keywords: z.array(z.string().min(1).max(100)).max(50).optional(),
              })
              .strict(),
          )
          .max(20),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      (await replaceSignals(em, actor, input.agent_id, input.signals)).map((s) => ({
        key: s.key,
        kind: s.kind,
        name: s.name,
      })),
  }),

  defineTool({
    name: 'launch_discovery',
    ids: { agent_id: 'agent', signal_id: { within: 'agent_id', child: 'signal' } },
    domain: 'discovery',
    description:
      'Launch a discovery run of an agent for one of its signals (or all enabled ones): it searches the sources and qualifies candidates against the ICP.',
    input: z.object({ agent_id: z.uuid(), signal_id: z.uuid().optional() }).strict(),
    risk: 'spend',
    run: async ({ em, actor, jobs }, input) => {
      const plan = await planRun(em, actor, input.agent_id, uuidv7(), input.signal_id);
      const { run } = await createRun(em, plan, 'manual');
      await jobs.start('discovery-run', plan);
      return { run_id: run.id, status: run.status, signals: plan.signals.map((s) => s.key) };
    },
  }),
  defineTool({
    name: 'get_discovery_funnel',
    ids: { agent_id: 'agent' },
    domain: 'discovery',
    description:
      'Read an agent’s discovery funnel: the last 30 days of candidates, qualified, rejected and pending, apart from current totals.',
    input: z.object({ agent_id: z.uuid() }).strict(),
    risk: 'read',
    run: ({ em, actor }, input) => funnel(em, actor, input.agent_id),
  }),
  defineTool({
    name: 'list_recent_runs',
    domain: 'discovery',
    description: 'List the latest discovery runs of the workspace with their counts and status.',
    input: z.object({ limit: z.number().int().min(1).max(50).default(10) }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (await recentRuns(em, actor, { limit: input.limit })).slice(0, input.limit).map((r) => ({
        id: r.id,
        agent_id: r.agent.id,
        status: r.status,
        qualified: r.qualified,
        rejected: r.rejected,
        started_at: r.startedAt.toISOString(),
      })),
  }),
];
