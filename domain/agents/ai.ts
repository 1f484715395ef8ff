// AI assistance for discovery agents: keywords from the agent's and product's ICP (stored on the
// agent, `keywords`), and newsforum search queries from those keywords (stored in the agent's
// newsforum source config, `queries`). The model is asked with no transaction open; the write that
// follows is short. In a Demo workspace the answer is returned and nothing is written.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSignal } from '../../db/entities/AgentSignal.js';
import { AgentSource } from '../../db/entities/AgentSource.js';
import { App, type IApp } from '../../db/entities/App.js';
import { DiscoveryAgent, type IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { generateKeywords, generateQueries, type ModelAdapter } from '../../lib/llm/index.js';
import { askModel, cleanTerms } from '../ai/calls.js';
import { requireAgent } from './agents.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';
import { MAX_TEXT_CHARS, profileText } from '../apps/ai.js';

export const MAX_KEYWORDS = 15;
export const MAX_QUERIES = 20;
const KEYWORDS_FOR_QUERIES = 30;

/** Strings found in a stored filter object (`icp_filters` is stored as sent, so its shape is not guaranteed). */
function filterTerms(filters: unknown, only?: string): string[] {
  if (!filters || typeof filters !== 'object' || Array.isArray(filters)) return [];
  return Object.entries(filters as Record<string, unknown>)
    .filter(([k, v]) => (only ? k === only : true) && Array.isArray(v))
    .flatMap(([, v]) => (v as unknown[]).filter((x): x is string => typeof x === 'string'));
}

/** The agent's product; a failure here is the spec's 500 `internal` ("failed to fetch app"). */
async function appOf(em: EntityManager, agent: IDiscoveryAgent): Promise<IApp> {
  const app = await em.findOne(App, { id: agent.app.id, workspace: agent.workspace.id }).catch(() => null);
  if (!app) throw new AppError(500, 'internal', 'failed to fetch app');
  return app;
}

/** What keywords are drawn from: the agent's ICP first, then the product's profile; names as a last resort. */
export function keywordSource(agent: IDiscoveryAgent, app: IApp): string {
  const parts = [
    agent.icpDescription,
    filterTerms(agent.icpFilters).join(', '),
    profileText(app),
    filterTerms(app.icpFilters, 'keywords').join(', '),
  ];
  const text = parts.filter((s) => s && s.trim()).join('\n');
  return (text || `${app.name}\n${agent.name}`).slice(0, MAX_TEXT_CHARS);
}

export interface KeywordsOutcome {
  keywords: string;
  stored: boolean;
}

/** POST /api/agents/{id}/generate-keywords: a comma-separated list, stored on the agent (not in Demo). */
export async function generateAgentKeywords(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  agentId: string,
): Promise<KeywordsOutcome> {
  const agent = await requireAgent(em, actor, agentId);
  const app = await appOf(em, agent);
  const input = { text: keywordSource(agent, app), max: MAX_KEYWORDS };
  const r = await askModel(
    em,
    actor,
    llm,
    { kind: 'keywords', appId: app.id, agentId: agent.id },
    input,
    'generate keywords',
    (m) => generateKeywords(m, input),
  );
  // Commas separate the stored list, so a keyword cannot contain one.
  const keywords = cleanTerms(
    r.keywords.map((k) => k.replace(/,/g, ' ')),
    MAX_KEYWORDS,
    100,
  ).join(', ');
  if (actor.isDemo) return { keywords, stored: false };
  await em.nativeUpdate(
    DiscoveryAgent,
    { id: agent.id, workspace: actor.workspaceId },
    { keywords: keywords || null, updatedAt: new Date() },
  );
  return { keywords, stored: true };
}

/** Keywords to search the forum with: the agent's generated ones, its post_keywords signals', then the ICP filters' keywords. */
async function queryKeywords(em: EntityManager, agent: IDiscoveryAgent, app: IApp): Promise<string[]> {
  const signals = await em.find(
    AgentSignal,
    { agent: agent.id, kind: 'post_keywords', enabled: true },
    { orderBy: { position: 'asc' } },
  );
  const all = [
    ...(agent.keywords ?? '').split(','),
    ...signals.flatMap((s) => s.keywords),
    ...filterTerms(agent.icpFilters, 'keywords'),
    ...filterTerms(app.icpFilters, 'keywords'),
  ];
  return cleanTerms(all, KEYWORDS_FOR_QUERIES, 100);
}

export interface QueriesOutcome {
  queries: string[];
  stored: boolean;
}

/**
 * POST /api/agents/{id}/sources/newsforum/generate-queries: search queries for the forum, stored as
 * `config.queries` of the agent's newsforum source (other config keys kept). Like the first PUT of
 * a source, storing configures it: a source never configured before is created enabled.
 */
export async function generateNewsforumQueries(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  agentId: string,
): Promise<QueriesOutcome> {
  const agent = await requireAgent(em, actor, agentId);
  const app = await appOf(em, agent);
  const keywords = await queryKeywords(em, agent, app);
  if (keywords.length === 0) {
    throw new AppError(
      422,
      'no_keywords',
      'the agent has no keywords to build queries from: generate them (POST /api/agents/{agentId}/generate-keywords) or add a post_keywords signal',
    );
  }
  const input = { keywords, forum: 'newsforum', max: MAX_QUERIES };
  const r = await askModel(
    em,
    actor,
    llm,
    { kind: 'queries', appId: app.id, agentId: agent.id },
    input,
    'generate queries',
    (m) => generateQueries(m, input),
  );
  const queries = cleanTerms(r.queries, MAX_QUERIES, 200);
  if (actor.isDemo) return { queries, stored: false };
  await em.fork().transactional(async (tx) => {
    const locked = await requireAgent(tx, actor, agent.id, { lock: true });
    const row =
      (await tx.findOne(AgentSource, { agent: locked.id, source: 'newsforum' })) ??
      tx.create(AgentSource, {
        agent: tx.getReference(DiscoveryAgent, locked.id),
        source: 'newsforum',
        enabled: true,
        config: {},
      });
    row.config = { ...row.config, queries };
  });
  return { queries, stored: true };
}
