// How a product operation asks the model: every call is recorded as a specialist run, an adapter
// failure becomes 500 `ai_error` (the LLM code in details, never its message, which may quote the
// provider), and a Demo workspace gets the deterministic local model without any record.
import type { EntityManager } from '@mikro-orm/postgresql';
import { LlmError, LocalModelAdapter, type ModelAdapter, type StructuredResult } from '../../lib/llm/index.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';
import { runSpecialist } from './specialist-runs.js';

/**
 * Demo workspaces are shared and read-only: their AI answers come from the local model (no cost, no
 * third-party traffic) and leave no specialist run, so one visitor's text is never shown to another.
 */
const demoModel = new LocalModelAdapter();

export interface AiTarget {
  /** Specialist run kind: 'product_profile', 'icp', 'keywords', 'queries'. */
  kind: string;
  appId?: string | null;
  agentId?: string | null;
}

export async function askModel<T>(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  target: AiTarget,
  input: string | object,
  /** What failed, for the error message: "generate keywords". */
  what: string,
  call: (model: ModelAdapter) => Promise<StructuredResult<T>>,
): Promise<T> {
  try {
    if (actor.isDemo) return (await call(demoModel)).value;
    const ctx = {
      workspaceId: actor.workspaceId,
      appId: target.appId ?? null,
      agentId: target.agentId ?? null,
      kind: target.kind,
      model: llm.model,
    };
    return (await runSpecialist(em, ctx, input, () => call(llm))).value;
  } catch (err) {
    if (err instanceof LlmError) {
      throw new AppError(500, 'ai_error', `failed to ${what}`, {
        llm_code: err.code,
        retryable: err.retryable,
        ...(err.status ? { upstream_status: err.status } : {}),
      });
    }
    throw err;
  }
}

/** At most `max` code points, NUL removed, trimmed; blank is null (so the caller can PUT what it accepts). */
export function cleanText(s: string | null | undefined, max: number): string | null {
  const t = (s ?? '').replace(/\u0000/g, '').trim();
  if (!t) return null;
  const cps = [...t];
  return cps.length <= max ? t : cps.slice(0, max).join('').trim();
}

/** Distinct (case-insensitive) non-blank terms, each at most `maxLength` code points, at most `max` of them. */
export function cleanTerms(terms: readonly string[], max: number, maxLength: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const term of terms) {
    const t = cleanText(term.replace(/\s+/g, ' '), maxLength);
    if (!t || seen.has(t.toLowerCase())) continue;
    seen.add(t.toLowerCase());
    out.push(t);
    if (out.length === max) break;
  }
  return out;
}
