// AI assistance for products: a suggested profile from a description or a web page, and an ICP
// proposal from the stored profile. Nothing here is stored on the product: the caller PUTs what it
// accepts. Every model call is a specialist run (domain/ai/calls.ts); no transaction is open meanwhile.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IApp } from '../../db/entities/App.js';
import { decodeBody, htmlToText } from '../../lib/html-text.js';
import { analyzeProduct, proposeIcp, type IcpProposal, type ModelAdapter } from '../../lib/llm/index.js';
import { getGuarded, type DestinationPolicy, type Resolver } from '../../lib/outbound-http.js';
import { askModel, cleanTerms, cleanText } from '../ai/calls.js';
import { requireApp } from './apps.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';

/** The longest text sent to the model: the analyze-text limit, and where a page's text is cut. */
export const MAX_TEXT_CHARS = 20_000;
/** A page is read up to this many bytes (the rest is never downloaded), within one 10 s deadline. */
export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
export const PAGE_TIMEOUT_MS = 10_000;
export const PAGE_MAX_REDIRECTS = 3;

const FILTER_KEYS = ['titles', 'seniorities', 'industries', 'countries', 'company_sizes', 'keywords'] as const;
export type SuggestedFilters = Record<(typeof FILTER_KEYS)[number], string[]>;

export interface IcpSuggestion {
  icp_description: string | null;
  icp_filters: SuggestedFilters;
}
export interface ProductSuggestion extends IcpSuggestion {
  name: string | null;
  description: string | null;
  value_proposition: string | null;
}

/** Within the limits of PUT /api/apps/{id}, so a suggestion can be sent back as it is. */
function toIcpSuggestion(p: IcpProposal, fallbackDescription?: string): IcpSuggestion {
  const filters = Object.fromEntries(
    FILTER_KEYS.map((k) => [k, cleanTerms(p.filters[k] ?? [], 50, 100)]),
  ) as SuggestedFilters;
  return {
    icp_description: cleanText(p.description, 10_000) ?? cleanText(fallbackDescription, 10_000),
    icp_filters: filters,
  };
}

async function suggestProfile(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  appId: string | null,
  input: { text: string; name?: string },
  summary: object,
): Promise<ProductSuggestion> {
  // Two independent calls (two specialist runs), each on its own fork so their writes do not share a context.
  const [profile, icp] = await Promise.all([
    askModel(em.fork(), actor, llm, { kind: 'product_profile', appId }, summary, 'analyze the product', (m) =>
      analyzeProduct(m, input),
    ),
    askModel(em.fork(), actor, llm, { kind: 'icp', appId }, summary, 'propose an ideal customer profile', (m) =>
      proposeIcp(m, { text: input.text }),
    ),
  ]);
  return {
    name: cleanText(input.name ?? profile.name, 200),
    description: cleanText(profile.description, 5000),
    value_proposition: cleanText(profile.value_proposition, 5000),
    ...toIcpSuggestion(icp, profile.icp_guess),
  };
}

/** Checks the product a suggestion is attributed to (its specialist runs are listed under it). */
async function attributedApp(em: EntityManager, actor: Actor, appId: string | undefined): Promise<string | null> {
  return appId ? (await requireApp(em, actor, appId)).id : null;
}

export async function analyzeText(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  input: { text: string; name?: string; app_id?: string },
): Promise<ProductSuggestion> {
  const appId = await attributedApp(em, actor, input.app_id);
  const name = cleanText(input.name, 200) ?? undefined;
  return suggestProfile(
    em,
    actor,
    llm,
    appId,
    { text: input.text, ...(name ? { name } : {}) },
    { text: input.text, name: name ?? null },
  );
}

export interface PageText {
  url: string;
  title: string | null;
  text: string;
  /** The page was larger than PAGE_MAX_BYTES, or its text longer than MAX_TEXT_CHARS. */
  truncated: boolean;
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;

/** Fetches a page through the guarded client and turns it into text; refusals and failures are AppErrors. */
export async function fetchPageText(
  url: string,
  policy: DestinationPolicy & { resolver?: Resolver },
): Promise<PageText> {
  const r = await getGuarded(url, {
    ...policy,
    timeoutMs: PAGE_TIMEOUT_MS,
    maxBytes: PAGE_MAX_BYTES,
    maxRedirects: PAGE_MAX_REDIRECTS,
    accept: 'text/html,application/xhtml+xml,text/plain;q=0.8',
  });
  if (!r.success) {
    if (r.errorClass === 'invalid_url' || r.errorClass === 'blocked_destination')
      throw new AppError(400, r.errorClass, r.error ?? 'destination refused');
    throw new AppError(502, 'fetch_failed', `the page could not be fetched: ${r.error}`, {
      error_class: r.errorClass,
      status_code: r.statusCode,
    });
  }
  const type = (r.contentType ?? '').split(';')[0].trim().toLowerCase();
  const isHtml = !type || HTML_TYPES.test(type);
  if (!isHtml && type !== 'text/plain')
    throw new AppError(422, 'no_text', `the page is ${type}, not HTML or plain text`, { content_type: type });
  const raw = decodeBody(r.body ?? Buffer.alloc(0), r.contentType);
  const { title, text } = isHtml ? htmlToText(raw) : { title: null, text: raw.trim() };
  if (!text) throw new AppError(422, 'no_text', 'the page has no readable text', { content_type: type || null });
  const cps = [...text];
  return {
    url: r.url,
    title,
    text: cps.slice(0, MAX_TEXT_CHARS).join(''),
    truncated: r.truncated || cps.length > MAX_TEXT_CHARS,
  };
}

export async function analyzeUrl(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  policy: DestinationPolicy,
  input: { url: string; app_id?: string },
): Promise<ProductSuggestion & { source: Omit<PageText, 'text'> & { chars: number } }> {
  const appId = await attributedApp(em, actor, input.app_id);
  const page = await fetchPageText(input.url, policy);
  // The title leads the text: the model (and the local one's "short first line" rule) reads it as the name.
  const text = page.title ? `${page.title}\n\n${page.text}` : page.text;
  const suggestion = await suggestProfile(
    em,
    actor,
    llm,
    appId,
    { text },
    { url: page.url, title: page.title, text: page.text },
  );
  return {
    ...suggestion,
    source: { url: page.url, title: page.title, truncated: page.truncated, chars: page.text.length },
  };
}

/** The profile as text for the model: name, description, value proposition, ICP. */
export function profileText(app: IApp): string {
  return [
    app.description,
    app.valueProposition && `Value proposition: ${app.valueProposition}`,
    app.icpDescription && `Customers: ${app.icpDescription}`,
  ]
    .filter((s): s is string => !!s && !!s.trim())
    .join('\n');
}

/** POST /api/apps/{id}/generate-icp: an ICP proposal from the stored profile (422 `no_text` when it has nothing to go on). */
export async function generateIcp(
  em: EntityManager,
  actor: Actor,
  llm: ModelAdapter,
  appId: string,
): Promise<IcpSuggestion> {
  const app = await requireApp(em, actor, appId);
  const body = profileText(app);
  if (!body)
    throw new AppError(
      422,
      'no_text',
      'the product has no description, value proposition or ICP description to work from; add one with PUT /api/apps/{id}',
    );
  const text = `${app.name}\n${body}`.slice(0, MAX_TEXT_CHARS);
  const icp = await askModel(
    em,
    actor,
    llm,
    { kind: 'icp', appId: app.id },
    { text },
    'propose an ideal customer profile',
    (m) => proposeIcp(m, { text }),
  );
  return toIcpSuggestion(icp);
}
