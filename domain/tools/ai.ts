// AI assistance as Operator tools: the same domain functions as REST (ownership, Demo behaviour,
// specialist runs), so a tool call is recorded and listed like any other model call.
import { z } from 'zod';
import { SPECIALIST_RUN_STATUSES } from '../../db/entities/SpecialistRun.js';
import { generateAgentKeywords, generateNewsforumQueries } from '../agents/ai.js';
import { analyzeText, generateIcp, MAX_TEXT_CHARS } from '../apps/ai.js';
import { listSpecialistRuns } from '../ai/specialist-runs.js';
import { defineTool, toolModel } from './registry.js';

const model = toolModel;

export const aiTools = [
  defineTool({
    name: 'analyze_product_text',
    ids: { app_id: 'app' },
    domain: 'apps',
    description:
      'Suggest a product profile (name, description, value proposition, ideal customer profile and filters) from a description. Stores nothing.',
    input: z
      .object({
        text: z.string().trim().min(1).max(MAX_TEXT_CHARS),
        name: z.string().trim().max(200).optional(),
        app_id: z.uuid().optional(),
      })
      .strict(),
    risk: 'read',
    run: (ctx, input) => analyzeText(ctx.em, ctx.actor, model(ctx), input),
  }),
  defineTool({
    name: 'propose_product_icp',
    ids: { app_id: 'app' },
    domain: 'apps',
    description:
      'Propose an ideal customer profile (description and filters) for a product from its stored profile. Stores nothing.',
    input: z.object({ app_id: z.uuid() }).strict(),
    risk: 'read',
    run: (ctx, input) => generateIcp(ctx.em, ctx.actor, model(ctx), input.app_id),
  }),
  defineTool({
    name: 'generate_agent_keywords',
    ids: { agent_id: 'agent' },
    domain: 'agents',
    description:
      'Generate search keywords for a discovery agent from its and its product’s ideal customer profile, and store them on the agent.',
    input: z.object({ agent_id: z.uuid() }).strict(),
    risk: 'change',
    run: (ctx, input) => generateAgentKeywords(ctx.em, ctx.actor, model(ctx), input.agent_id),
  }),
  defineTool({
    name: 'generate_newsforum_queries',
    ids: { agent_id: 'agent' },
    domain: 'agents',
    description:
      'Generate forum search queries from a discovery agent’s keywords and store them in its newsforum source settings.',
    input: z.object({ agent_id: z.uuid() }).strict(),
    risk: 'change',
    run: (ctx, input) => generateNewsforumQueries(ctx.em, ctx.actor, model(ctx), input.agent_id),
  }),
  defineTool({
    name: 'list_specialist_runs',
    ids: { app_id: 'app' },
    domain: 'apps',
    description:
      'List the recent AI calls (specialist runs) of a product, newest first: kind, status, tokens, cost, errors.',
    input: z
      .object({
        app_id: z.uuid(),
        kind: z.string().min(1).max(100).optional(),
        status: z.enum(SPECIALIST_RUN_STATUSES).optional(),
        limit: z.int().min(1).max(50).optional(),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (
        await listSpecialistRuns(
          em,
          actor,
          { appId: input.app_id, kind: input.kind, status: input.status },
          { limit: input.limit ?? 20 },
        )
      )
        .slice(0, input.limit ?? 20)
        .map((r) => ({
          id: r.id,
          kind: r.kind,
          status: r.status,
          agent_id: r.agentId ?? null,
          error_code: r.errorCode ?? null,
          input_tokens: r.inputTokens,
          output_tokens: r.outputTokens,
          cost_micros: r.costMicros,
          started_at: r.startedAt.toISOString(),
        })),
  }),
];
