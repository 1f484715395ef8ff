// Signal preview: one page of one signal (saved, or inline to try before saving) from the agent's
// enabled sources, marked `known` where the workspace already has the person (the same dedupe as a
// run) and qualified against the same ICP as a run. Synchronous and bounded (≤ 25 candidates, one
// page, a deadline); it writes nothing — not even a specialist-run record — so a Demo workspace may
// use it as is.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSignal } from '../../db/entities/AgentSignal.js';
import { AgentSource } from '../../db/entities/AgentSource.js';
import { App } from '../../db/entities/App.js';
import { LlmError, type ModelAdapter } from '../../lib/llm/types.js';
import { SourceError, type Candidate, type DiscoverySource } from '../../lib/sources/types.js';
import { requireAgent, SOURCES_FOR_KIND, type SignalKind, type SourceName } from './agents.js';
import { dedupeKeyOf, icpOf, judgeCandidate, knownKeys, signalQueryOf, SignalFiltersInput } from './discovery.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

export const PREVIEW_MAX = 25;
export const PREVIEW_DEFAULT = 10;
/** The whole preview (source page + model calls) must finish within this. */
export const PREVIEW_DEADLINE_MS = 15_000;

export interface InlineSignal {
  kind: SignalKind;
  keywords?: string[];
  filters?: unknown;
}

export interface PreviewInput {
  signalId?: string;
  signal?: InlineSignal;
  limit: number;
}

export interface PreviewProviders {
  llm: ModelAdapter;
  sources: { get(name: SourceName): DiscoverySource };
}

export interface PreviewCandidate {
  name: string;
  title: string | null;
  company: string | null;
  country: string | null;
  profile_url: string | null;
  evidence: { kind: string; text: string; url: string | null; date: string };
  known: boolean;
  score: number | null;
  verdict: 'qualified' | 'rejected' | null;
  reasons: string[];
}

export interface Preview {
  signal: {
    id: string | null;
    key: string | null;
    kind: SignalKind;
    keywords: string[];
    filters: Record<string, unknown>;
    sources: SourceName[];
  };
  candidates: PreviewCandidate[];
}

const mapLimit = async <T, R>(items: T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> => {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
};

/** Runs `fn` with an abort signal that fires at the deadline, and gives up waiting then even if `fn` ignores it. */
async function withDeadline<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort();
      reject(
        new AppError(504, 'preview_timeout', `the preview did not finish within ${ms / 1000} s; try a smaller limit`),
      );
    }, ms);
  });
  try {
    return await Promise.race([fn(ctl.signal), expired]);
  } catch (err) {
    if (ctl.signal.aborted)
      throw new AppError(
        504,
        'preview_timeout',
        `the preview did not finish within ${ms / 1000} s; try a smaller limit`,
      );
    if (err instanceof SourceError)
      throw new AppError(503, 'source_unavailable', `the source could not be searched: ${err.message}`);
    if (err instanceof LlmError)
      throw new AppError(503, 'model_unavailable', `the model could not qualify the candidates: ${err.message}`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export async function previewSignal(
  em: EntityManager,
  actor: Actor,
  providers: PreviewProviders,
  agentId: string,
  input: PreviewInput,
  opts: { deadlineMs?: number } = {},
): Promise<Preview> {
  const agent = await requireAgent(em, actor, agentId);
  let signal: { id: string | null; key: string | null; kind: SignalKind; keywords: string[]; filters: unknown };
  if (input.signalId) {
    const s = await em.findOne(AgentSignal, { id: input.signalId, agent: agent.id });
    if (!s) throw notFound('signal');
    signal = { id: s.id, key: s.key, kind: s.kind as SignalKind, keywords: [...s.keywords], filters: s.filters };
  } else {
    const s = input.signal!;
    signal = { id: null, key: null, kind: s.kind, keywords: s.keywords ?? [], filters: s.filters };
  }
  const enabled = new Set(
    (await em.find(AgentSource, { agent: agent.id, enabled: true })).map((s) => s.source as SourceName),
  );
  const sources = SOURCES_FOR_KIND[signal.kind].filter((s) => enabled.has(s));
  if (!sources.length)
    throw new AppError(
      400,
      'no_enabled_source',
      'enable a source that serves this signal’s kind (PUT /api/agents/{agentId}/sources/{source})',
    );
  const app = await em.findOneOrFail(App, agent.app.id);
  const rules = { icp: icpOf(agent, app), requireCurrentEmployer: agent.requireCurrentEmployer };
  const query = signalQueryOf(agent, signal);
  const applied = SignalFiltersInput.safeParse(signal.filters ?? {});

  const candidates = await withDeadline(opts.deadlineMs ?? PREVIEW_DEADLINE_MS, async (abort) => {
    const pages = await Promise.all(
      sources.map((name) => providers.sources.get(name).search(query, { limit: input.limit }, abort)),
    );
    // Within the page the first piece of evidence about a person wins, as in a run.
    const byKey = new Map<string, Candidate>();
    for (const c of pages.flatMap((p) => p.candidates)) if (!byKey.has(dedupeKeyOf(c))) byKey.set(dedupeKeyOf(c), c);
    const picked = [...byKey].slice(0, input.limit);
    const known = await knownKeys(
      em,
      { agentId: agent.id, workspaceId: actor.workspaceId },
      picked.map(([k]) => k),
    );
    return mapLimit(picked, 8, async ([key, c]): Promise<PreviewCandidate> => {
      const judged = known.has(key) ? null : await judgeCandidate(providers.llm, rules, c, abort);
      return {
        name: c.fullName,
        title: c.title,
        company: c.company?.name ?? null,
        country: c.country,
        profile_url: c.profileUrl,
        evidence: {
          kind: c.evidence.kind,
          text: c.evidence.text.slice(0, 2000),
          url: c.evidence.url,
          date: c.evidence.date,
        },
        known: known.has(key),
        score: judged?.score ?? null,
        verdict: judged ? (judged.qualified ? 'qualified' : 'rejected') : null,
        reasons: judged?.reasons ?? [],
      };
    });
  });
  return {
    signal: {
      id: signal.id,
      key: signal.key,
      kind: signal.kind,
      keywords: signal.keywords,
      filters: applied.success ? applied.data : {},
      sources,
    },
    candidates,
  };
}
