// AI assistance for discovery agents: keywords (stored on the agent) and newsforum queries (stored
// in the agent's newsforum source config). In a Demo workspace both answer with `simulated: true`
// and store nothing (domain/agents/ai.ts).
import { z } from 'zod';
import { generateAgentKeywords, generateNewsforumQueries } from '../../domain/agents/ai.js';
import { defineOperation } from '../operation.js';
import { AgentParams } from './schemas.js';

const tag = 'agents';
const DEMO_MESSAGE = 'Demo workspace: nothing was stored; this is what would have been';
const demoFields = {
  simulated: z
    .literal(true)
    .optional()
    .meta({ description: 'Present in a Demo workspace: the result was not stored.' }),
  message: z.string().optional(),
};
const simulated = (stored: boolean) => (stored ? {} : { simulated: true as const, message: DEMO_MESSAGE });

export const GeneratedKeywordsView = z.object({
  keywords: z.string().meta({ description: 'Comma-separated keywords (", "), also stored as the agent’s `keywords`.' }),
  ...demoFields,
});

export const GeneratedQueriesView = z.object({
  queries: z
    .array(z.string())
    .meta({ description: 'Also stored as `config.queries` of the agent’s newsforum source.' }),
  ...demoFields,
});

export const generateKeywordsOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/generate-keywords',
  ids: { path: { agentId: 'agent' } },
  summary: 'Generate keywords from the agent’s and product’s ICP; stored on the agent (Demo: returned, not stored)',
  tag,
  auth: 'user',
  demo: 'simulate',
  params: AgentParams,
  responses: { 200: GeneratedKeywordsView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned'],
    404: ['not_found'],
    500: ['ai_error', 'internal'],
  },
  handler: async ({ em, actor, services, params }) => {
    const r = await generateAgentKeywords(em, actor, services.llm, params.agentId);
    return { keywords: r.keywords, ...simulated(r.stored) };
  },
});

export const generateQueriesOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/sources/newsforum/generate-queries',
  ids: { path: { agentId: 'agent' } },
  summary:
    'Generate newsforum search queries from the agent’s keywords; stored in its newsforum source config (Demo: returned, not stored)',
  tag,
  auth: 'user',
  demo: 'simulate',
  params: AgentParams,
  responses: { 200: GeneratedQueriesView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned'],
    404: ['not_found'],
    422: ['no_keywords'],
    500: ['ai_error', 'internal'],
  },
  handler: async ({ em, actor, services, params }) => {
    const r = await generateNewsforumQueries(em, actor, services.llm, params.agentId);
    return { queries: r.queries, ...simulated(r.stored) };
  },
});
