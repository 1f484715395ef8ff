// The local model: deterministic, offline and fast, the default when no LLM is configured. It answers
// each task with plain text rules (docs/llm.md, "The local model"), so that the product is usable and
// testable without a provider: the same input always gives the same answer, and a different input a
// different one. Discovery qualifies thousands of candidates per second with it, so `qualify` does no
// I/O, no timers and caches what it derives from an ICP object.
import { z } from 'zod';
import type {
  Candidate,
  IcpFilters,
  IcpInput,
  IcpProposal,
  MessageInput,
  ProductProfile,
  Qualification,
  QualifyInput,
  ReplyInput,
  WrittenMessage,
} from './tasks.js';
import {
  LlmError,
  type ChatMessage,
  type ModelAdapter,
  type StreamEvent,
  type StreamRequest,
  type StructuredRequest,
  type StructuredResult,
  type ToolSpec,
  type Usage,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// Text

const STOP = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing down during each etc few for from further had has have having he her here hers him his how i if in into is it its ' +
    'itself just me more most my no nor not now of off on once only or other our ours out over own same she should so some such than that ' +
    'the their theirs them then there these they this those through to too under until up us very was we were what when where which while ' +
    'who whom whose why will with would you your yours via per within without across around e g ie eg ' +
    // Words too generic to search for.
    'company companies business businesses people person employee employees use uses using used help helps helping make makes get gets ' +
    'new best like want wants need needs way ways well really thing things lot lots one two many much every able let lets allow allows ' +
    'easy easily simple simply great good better more less fast faster year years day days time times today tool tools product products ' +
    'solution solutions platform based including include includes looking work works working team teams ' +
    // Common verbs: they join words into poor phrases ("Acme finds buyers").
    'find finds build builds run runs turn turns send sends track tracks manage manages create creates offer offers provide ' +
    'provides enable enables connect connects save saves grow grows boost boosts automate automates struggle struggles ' +
    'hire hires bring brings keep keeps give gives take takes see sees know knows try tries start starts become becomes built cut cuts improve improves increase increases reduce reduces write writes tell show'
  ).split(' '),
);

/** Words that end in "s" without being plurals. */
const NO_STEM = new Set(['saas', 'paas', 'iaas', 'ios', 'aws', 'sms', 'news', 'kubernetes', 'analytics', 'sales']);
/** Light plural folding, applied to both sides of every comparison. */
const stem = (w: string) =>
  NO_STEM.has(w)
    ? w
    : w.length > 4 && w.endsWith('ies')
      ? `${w.slice(0, -3)}y`
      : w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')
        ? w.slice(0, -1)
        : w;

const WORD = /[\p{L}\p{N}][\p{L}\p{N}+#]*/gu;
/** Lower-case word tokens (letters, digits, `+`, `#`); everything else separates. */
export const words = (s: string): string[] => s.toLowerCase().match(WORD) ?? [];
const stems = (s: string) => words(s).map(stem);

const ABBREVIATIONS: [RegExp, string][] = [
  [/\bvice[\s-]+president\b/g, 'vp'],
  [/\bchief executive officer\b/g, 'ceo'],
  [/\bchief technology officer\b/g, 'cto'],
  [/\bchief marketing officer\b/g, 'cmo'],
  [/\bchief financial officer\b/g, 'cfo'],
  [/\bchief operating officer\b/g, 'coo'],
  [/\bchief revenue officer\b/g, 'cro'],
  [/\bco[\s-]?founder\b/g, 'founder'],
  [/\bsr\b\.?/g, 'senior'],
  [/\bjr\b\.?/g, 'junior'],
  [/\bmgr\b/g, 'manager'],
  [/\bdir\b\.?/g, 'director'],
];
/** Title tokens with the usual abbreviations folded ("Vice President of Sales" → vp, sales). */
function titleStems(title: string): string[] {
  let t = title.toLowerCase();
  for (const [re, to] of ABBREVIATIONS) t = t.replace(re, to);
  return words(t)
    .filter((w) => !STOP.has(w))
    .map(stem);
}

/** Distinctive (non-stop) stems of a phrase, for "every word of the phrase occurs" matching. */
const phraseStems = (s: string) =>
  words(s)
    .filter((w) => !STOP.has(w))
    .map(stem);

const estimateTokens = (s: string) => Math.ceil(s.length / 4);

// ---------------------------------------------------------------------------------------------
// Keywords: frequency of non-stop words and of two-word phrases that do not cross a stop word or
// punctuation; phrases weigh more; ties keep the order of first appearance.

// Words keep inner hyphens and apostrophes ("no-shows", "e-commerce"); other punctuation breaks phrases.
const SEGMENT = /[\p{L}\p{N}](?:[\p{L}\p{N}+#]|['’-](?=[\p{L}\p{N}]))*|[^\s\p{L}\p{N}]/gu;

export function extractKeywords(text: string, max = 12): string[] {
  type Entry = { surface: string; count: number; first: number; inPhrases: number };
  const uni = new Map<string, Entry>();
  const bi = new Map<string, Entry & { parts: [string, string] }>();
  let prev: { stem: string; surface: string } | null = null;
  let pos = 0;
  for (const raw of text.match(SEGMENT) ?? []) {
    pos++;
    const w = raw
      .toLowerCase()
      .replace(/['’]s$/, '')
      .replace(/['’]/g, '');
    const isWord = /^[\p{L}\p{N}]/u.test(w);
    if (!isWord || STOP.has(w) || w.length < 2 || /^\d+$/.test(w)) {
      prev = null;
      continue;
    }
    const s = stem(w);
    const u = uni.get(s) ?? { surface: w, count: 0, first: pos, inPhrases: 0 };
    u.count++;
    uni.set(s, u);
    if (prev && prev.stem !== s) {
      const key = `${prev.stem} ${s}`;
      const b = bi.get(key) ?? {
        surface: `${prev.surface} ${w}`,
        count: 0,
        first: pos - 1,
        inPhrases: 0,
        parts: [prev.stem, s] as [string, string],
      };
      b.count++;
      bi.set(key, b);
    }
    prev = { stem: s, surface: w };
  }
  const scored: { surface: string; score: number; first: number; parts?: [string, string] }[] = [];
  for (const b of bi.values())
    scored.push({ surface: b.surface, score: b.count * 1.5 + 0.5, first: b.first, parts: b.parts });
  scored.sort((a, b) => b.score - a.score || a.first - b.first);
  // A phrase sharing a word with a better one ("b2b saas", "saas buyers") is mostly the same idea.
  const phrases: typeof scored = [];
  const taken = new Set<string>();
  for (const p of scored) {
    if (phrases.length >= Math.ceil((max * 2) / 3)) break;
    if (p.parts!.some((w) => taken.has(w))) continue;
    phrases.push(p);
    p.parts!.forEach((w) => taken.add(w));
  }
  for (const p of phrases) for (const part of p.parts!) uni.get(part)!.inPhrases += bi.get(p.parts!.join(' '))!.count;
  // A word that only ever appears inside a chosen phrase adds nothing of its own.
  const singles = [...uni.values()]
    .filter((u) => u.count > u.inPhrases)
    .map((u) => ({ surface: u.surface, score: u.count, first: u.first }));
  return [...phrases, ...singles]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .slice(0, max)
    .map((k) => k.surface);
}

// ---------------------------------------------------------------------------------------------
// Qualification

/** Field weights of the score; only the criteria an ICP specifies count. */
const WEIGHTS = { title: 30, seniority: 15, industry: 20, country: 15, company_size: 10, keywords: 25 } as const;
export const DEFAULT_THRESHOLD = 60;

const SENIORITY_ALIASES: Record<string, string> = {
  'c level': 'c_level',
  'c suite': 'c_level',
  cxo: 'c_level',
  executive: 'c_level',
  chief: 'c_level',
  ceo: 'c_level',
  cto: 'c_level',
  cfo: 'c_level',
  coo: 'c_level',
  cmo: 'c_level',
  cro: 'c_level',
  cpo: 'c_level',
  ciso: 'c_level',
  president: 'c_level',
  vp: 'vp',
  'vice president': 'vp',
  svp: 'vp',
  evp: 'vp',
  founder: 'founder',
  'co founder': 'founder',
  cofounder: 'founder',
  owner: 'founder',
  partner: 'partner',
  head: 'head',
  director: 'director',
  manager: 'manager',
  lead: 'manager',
  senior: 'senior',
  principal: 'senior',
  staff: 'senior',
  entry: 'entry',
  'entry level': 'entry',
  junior: 'entry',
  associate: 'entry',
  assistant: 'entry',
  intern: 'entry',
  training: 'entry',
};
/** "C-Level", "c_level", "CXO" → c_level; unknown values stay as their lower-case words. */
export const normalizeSeniority = (s: string) => {
  const key = words(s.replace(/_/g, ' ')).join(' ');
  return SENIORITY_ALIASES[key] ?? key;
};

/** Seniority implied by a title, most senior word first; null when the title says nothing. */
const SENIORITY_ORDER = ['founder', 'c_level', 'vp', 'partner', 'head', 'director', 'manager', 'senior', 'entry'];
function seniorityOfTitle(titleTokens: string[]): string | null {
  let best: string | null = null;
  for (const t of titleTokens) {
    // "Account Executive" is not an executive.
    const s = t === 'executive' ? undefined : SENIORITY_ALIASES[t];
    if (s && (best === null || SENIORITY_ORDER.indexOf(s) < SENIORITY_ORDER.indexOf(best))) best = s;
  }
  // "Vice President" was folded to vp already, so a remaining "president" is c-level.
  return best;
}

const COUNTRIES: [code: string, name: string, ...aliases: string[]][] = [
  ['US', 'United States', 'usa', 'united states of america', 'america', 'u s'],
  ['GB', 'United Kingdom', 'uk', 'great britain', 'england', 'scotland', 'wales', 'britain'],
  ['DE', 'Germany', 'deutschland'],
  ['FR', 'France'],
  ['ES', 'Spain'],
  ['IT', 'Italy'],
  ['NL', 'Netherlands', 'holland', 'the netherlands'],
  ['BE', 'Belgium'],
  ['CH', 'Switzerland'],
  ['AT', 'Austria'],
  ['SE', 'Sweden'],
  ['NO', 'Norway'],
  ['DK', 'Denmark'],
  ['FI', 'Finland'],
  ['IE', 'Ireland'],
  ['PL', 'Poland'],
  ['PT', 'Portugal'],
  ['CA', 'Canada'],
  ['AU', 'Australia'],
  ['NZ', 'New Zealand'],
  ['IN', 'India'],
  ['SG', 'Singapore'],
  ['JP', 'Japan'],
  ['BR', 'Brazil'],
  ['MX', 'Mexico'],
  ['IL', 'Israel'],
  ['AE', 'United Arab Emirates', 'uae'],
  ['ZA', 'South Africa'],
];
const COUNTRY_INDEX = new Map<string, string>();
for (const [code, name, ...aliases] of COUNTRIES)
  for (const n of [code, name, ...aliases]) COUNTRY_INDEX.set(words(n).join(' '), code);
const COUNTRY_NAME = new Map(COUNTRIES.map(([code, name]) => [code, name]));

/** ISO code for a country name, code or "City, Country"; the lower-case words when unknown. */
export function canonicalCountry(s: string): string {
  const whole = words(s).join(' ');
  const hit = COUNTRY_INDEX.get(whole);
  if (hit) return hit;
  const last = s.split(',').pop()!;
  return COUNTRY_INDEX.get(words(last).join(' ')) ?? whole;
}

/** "51-200", "10001+", "1,000-5,000", 120 → [min, max]; null when unreadable. */
export function sizeRange(v: string | number): [number, number] | null {
  if (typeof v === 'number') return Number.isFinite(v) ? [v, v] : null;
  const m = /^\s*(\d+)\s*(?:([-–]|to)\s*(\d+)|(\+))?\s*$/.exec(v.replace(/,/g, ''));
  if (!m) return null;
  const lo = Number(m[1]);
  return [lo, m[4] ? Infinity : m[3] ? Number(m[3]) : lo];
}

interface CompiledIcp {
  titles: { label: string; stems: string[] }[];
  seniorities: Set<string>;
  industries: { label: string; stems: string[] }[];
  countries: Set<string>;
  sizes: { label: string; range: [number, number] }[];
  keywords: { label: string; stems: string[] }[];
  keywordsFromDescription: boolean;
  exclude: { label: string; stems: string[] }[];
}

const nonEmpty = (xs: string[] | undefined) => (xs ?? []).map((x) => x.trim()).filter(Boolean);
const phrases = (xs: string[]) =>
  xs.map((label) => ({ label, stems: phraseStems(label) })).filter((p) => p.stems.length > 0);

// The same ICP object is qualified against many candidates in a discovery batch: derive once.
const compiled = new WeakMap<object, CompiledIcp>();
function compileIcp(icp: IcpInput): CompiledIcp {
  const hit = compiled.get(icp);
  if (hit) return hit;
  let keywords = phrases(nonEmpty(icp.keywords));
  const keywordsFromDescription = keywords.length === 0 && !!icp.description?.trim();
  if (keywordsFromDescription) keywords = phrases(extractKeywords(icp.description!, 8));
  const c: CompiledIcp = {
    titles: nonEmpty(icp.titles)
      .map((label) => ({ label, stems: titleStems(label) }))
      .filter((t) => t.stems.length > 0),
    seniorities: new Set(nonEmpty(icp.seniorities).map(normalizeSeniority)),
    industries: phrases(nonEmpty(icp.industries).map((i) => i.replace(/\bsaas\b/gi, 'software'))),
    countries: new Set(nonEmpty(icp.countries).map(canonicalCountry)),
    sizes: nonEmpty(icp.company_sizes).flatMap((label) => {
      const range = sizeRange(label);
      return range ? [{ label, range }] : [];
    }),
    keywords,
    keywordsFromDescription,
    exclude: phrases(nonEmpty(icp.exclude_keywords)),
  };
  compiled.set(icp, c);
  return c;
}

const TEXT_FIELDS = ['headline', 'text', 'title', 'company', 'industry'] as const;
type Reason = Qualification['reasons'][number];
const quote = (xs: string[]) => xs.map((x) => `"${x}"`).join(', ');

/** Scores a candidate against an ICP: 0–100, one reason per criterion the ICP specifies. */
export function qualify(input: QualifyInput): Qualification {
  const icp = compileIcp(input.icp ?? {});
  const c: Candidate = input.candidate ?? {};
  const threshold = input.threshold ?? DEFAULT_THRESHOLD;
  const reasons: Reason[] = [];
  let total = 0;
  let earned = 0;
  const add = (field: keyof typeof WEIGHTS, credit: number, matched: boolean, detail: string) => {
    total += WEIGHTS[field];
    earned += WEIGHTS[field] * credit;
    reasons.push({ field, matched, detail });
  };

  const title = c.title?.trim() ? titleStems(c.title) : null;
  if (icp.titles.length) {
    if (!title) add('title', 0, false, 'the candidate has no title');
    else {
      const have = new Set(title);
      let best = { frac: 0, label: '' };
      for (const t of icp.titles) {
        const frac = t.stems.filter((s) => have.has(s)).length / t.stems.length;
        if (frac > best.frac) best = { frac, label: t.label };
      }
      if (best.frac === 1) add('title', 1, true, `title "${c.title}" matches "${best.label}"`);
      else if (best.frac >= 0.5) add('title', 0.5, false, `title "${c.title}" partly matches "${best.label}"`);
      else add('title', 0, false, `title "${c.title}" matches none of ${quote(icp.titles.map((t) => t.label))}`);
    }
  }

  if (icp.seniorities.size) {
    const s = c.seniority?.trim() ? normalizeSeniority(c.seniority) : title ? seniorityOfTitle(title) : null;
    if (!s) add('seniority', 0, false, 'the candidate has no known seniority');
    else if (icp.seniorities.has(s)) add('seniority', 1, true, `seniority ${s} is wanted`);
    else add('seniority', 0, false, `seniority ${s} is not one of ${[...icp.seniorities].join(', ')}`);
  }

  if (icp.industries.length) {
    if (!c.industry?.trim()) add('industry', 0, false, 'the candidate has no industry');
    else {
      const have = new Set(phraseStems(c.industry.replace(/\bsaas\b/gi, 'software')));
      const hit = icp.industries.find(
        (i) => i.stems.every((s) => have.has(s)) || [...have].every((s) => i.stems.includes(s)),
      );
      if (hit) add('industry', 1, true, `industry "${c.industry}" matches "${hit.label}"`);
      else
        add(
          'industry',
          0,
          false,
          `industry "${c.industry}" matches none of ${quote(icp.industries.map((i) => i.label))}`,
        );
    }
  }

  if (icp.countries.size) {
    if (!c.country?.trim()) add('country', 0, false, 'the candidate has no country');
    else {
      const code = canonicalCountry(c.country);
      if (icp.countries.has(code)) add('country', 1, true, `country ${COUNTRY_NAME.get(code) ?? c.country} is wanted`);
      else add('country', 0, false, `country ${COUNTRY_NAME.get(code) ?? c.country} is not wanted`);
    }
  }

  if (icp.sizes.length) {
    const range = c.company_size == null || c.company_size === '' ? null : sizeRange(c.company_size);
    if (!range) add('company_size', 0, false, 'the candidate has no readable company size');
    else {
      const hit = icp.sizes.find((s) => range[0] <= s.range[1] && s.range[0] <= range[1]);
      if (hit) add('company_size', 1, true, `company size ${c.company_size} is within ${hit.label}`);
      else
        add(
          'company_size',
          0,
          false,
          `company size ${c.company_size} is outside ${icp.sizes.map((s) => s.label).join(', ')}`,
        );
    }
  }

  // Keywords and exclusions are searched in every text field; the reason names where they were found.
  let where: Map<string, string> | undefined;
  const foundIn = (p: { stems: string[] }): string | undefined => {
    if (!where) {
      where = new Map();
      for (const f of TEXT_FIELDS) for (const s of stems(c[f] ?? '')) if (!where.has(s)) where.set(s, f);
    }
    return p.stems.every((s) => where!.has(s)) ? where.get(p.stems[0]) : undefined;
  };
  if (icp.keywords.length) {
    const hits: { label: string; field: string }[] = [];
    for (const k of icp.keywords) {
      const f = foundIn(k);
      if (f) hits.push({ label: k.label, field: f });
    }
    const source = icp.keywordsFromDescription ? 'ICP description terms' : 'keywords';
    if (hits.length) {
      const fields = [...new Set(hits.map((h) => h.field))].join(', ');
      add(
        'keywords',
        Math.min(1, hits.length / Math.min(2, icp.keywords.length)),
        true,
        `${source} ${quote(hits.map((h) => h.label))} found in ${fields}`,
      );
    } else
      add('keywords', 0, false, `none of the ${source} ${quote(icp.keywords.slice(0, 5).map((k) => k.label))} found`);
  }

  let score = total === 0 ? 50 : Math.round((100 * earned) / total);
  if (total === 0) reasons.push({ field: 'icp', matched: false, detail: 'the ICP has no criteria to match' });
  const excluded = icp.exclude.filter((e) => foundIn(e));
  if (excluded.length) {
    score = 0;
    reasons.push({
      field: 'exclude_keywords',
      matched: false,
      detail: `mentions excluded ${quote(excluded.map((e) => e.label))}`,
    });
  }
  return { score, verdict: score >= threshold ? 'qualified' : 'rejected', reasons };
}

// ---------------------------------------------------------------------------------------------
// ICP proposal and product profile

const ROLES: { cues: string[]; titles: string[]; seniorities: string[] }[] = [
  {
    cues: ['sales', 'sdr', 'bdr', 'revenue', 'pipeline', 'prospecting', 'outbound', 'quota', 'lead', 'crm'],
    titles: ['VP of Sales', 'Head of Sales', 'Sales Director'],
    seniorities: ['vp', 'head', 'director'],
  },
  {
    cues: ['marketing', 'marketer', 'brand', 'seo', 'campaign', 'content', 'growth', 'inbound'],
    titles: ['CMO', 'Head of Marketing', 'Marketing Director'],
    seniorities: ['c_level', 'head', 'director'],
  },
  {
    cues: ['engineering', 'engineer', 'developer', 'devop', 'code', 'api', 'deploy', 'infrastructure'],
    titles: ['CTO', 'VP of Engineering', 'Engineering Manager'],
    seniorities: ['c_level', 'vp', 'manager'],
  },
  {
    cues: ['recruiting', 'recruiter', 'hiring', 'talent', 'hr', 'candidate', 'recruitment'],
    titles: ['Head of Talent', 'HR Director', 'Recruiting Manager'],
    seniorities: ['head', 'director', 'manager'],
  },
  {
    cues: ['finance', 'accounting', 'invoice', 'cfo', 'payroll', 'bookkeeping', 'expense'],
    titles: ['CFO', 'Head of Finance', 'Finance Director'],
    seniorities: ['c_level', 'head', 'director'],
  },
  {
    cues: ['support', 'onboarding', 'churn', 'retention', 'ticket'],
    titles: ['VP of Customer Success', 'Head of Customer Success', 'Support Manager'],
    seniorities: ['vp', 'head', 'manager'],
  },
  {
    cues: ['operation', 'logistic', 'supply', 'warehouse', 'procurement'],
    titles: ['COO', 'Head of Operations', 'Operations Manager'],
    seniorities: ['c_level', 'head', 'manager'],
  },
  {
    cues: ['founder', 'startup', 'bootstrapped', 'solopreneur', 'entrepreneur'],
    titles: ['Founder', 'CEO'],
    seniorities: ['founder', 'c_level'],
  },
];
const INDUSTRIES: { cues: string[]; name: string }[] = [
  { cues: ['saas', 'software', 'app', 'cloud', 'api', 'developer'], name: 'Software' },
  { cues: ['ecommerce', 'commerce', 'shopify', 'store', 'retail', 'shop'], name: 'E-commerce' },
  { cues: ['fintech', 'bank', 'banking', 'payment', 'lending', 'insurance'], name: 'Financial Services' },
  { cues: ['health', 'healthcare', 'clinic', 'medical', 'patient', 'hospital'], name: 'Healthcare' },
  { cues: ['agency', 'advertising', 'ads', 'adtech'], name: 'Marketing & Advertising' },
  { cues: ['education', 'school', 'edtech', 'university', 'learning', 'course', 'student'], name: 'Education' },
  { cues: ['estate', 'property', 'realtor', 'landlord'], name: 'Real Estate' },
  { cues: ['manufacturing', 'factory', 'industrial', 'machinery'], name: 'Manufacturing' },
  { cues: ['logistic', 'shipping', 'freight', 'fleet', 'delivery'], name: 'Logistics' },
  { cues: ['staffing', 'recruitment', 'recruiting'], name: 'Staffing & Recruiting' },
  { cues: ['consulting', 'consultancy', 'consultant', 'advisory'], name: 'Consulting' },
];
const REGIONS: Record<string, string[]> = {
  europe: ['GB', 'DE', 'FR', 'NL'],
  eu: ['DE', 'FR', 'NL', 'ES'],
  dach: ['DE', 'AT', 'CH'],
  nordic: ['SE', 'NO', 'DK', 'FI'],
  'north america': ['US', 'CA'],
  benelux: ['BE', 'NL'],
};
const SIZES: { cues: string[]; sizes: string[]; words: string }[] = [
  {
    cues: ['enterprise', 'fortune', 'corporation', 'corporate', 'global'],
    sizes: ['1001-5000', '5001-10000', '10001+'],
    words: 'enterprise (1,000+ employees)',
  },
  {
    cues: ['mid market', 'midmarket', 'mid size', 'midsize', 'scaleup', 'scale up'],
    sizes: ['51-200', '201-500', '501-1000'],
    words: 'mid-market (51–1,000 employees)',
  },
  {
    cues: ['smb', 'sme', 'small medium', 'small business', 'small businesse', 'agency'],
    sizes: ['11-50', '51-200'],
    words: 'small and mid-sized (11–200 employees)',
  },
  {
    cues: ['startup', 'founder', 'solopreneur', 'freelancer', 'bootstrapped', 'indie'],
    sizes: ['1-10', '11-50'],
    words: 'early-stage (1–50 employees)',
  },
];

/** The rows whose cues the text mentions most; a row after the first needs two cues (one word is a weak hint). */
const rank = <T extends { cues: string[] }>(table: T[], have: Set<string>, joined: string, take: number): T[] =>
  table
    .map((row, i) => ({
      row,
      i,
      hits: row.cues.filter((c) => (c.includes(' ') ? joined.includes(` ${c} `) : have.has(c))).length,
    }))
    .filter((r) => r.hits > 0)
    .sort((a, b) => b.hits - a.hits || a.i - b.i)
    .filter((r, i) => i === 0 || r.hits >= 2)
    .slice(0, take)
    .map((r) => r.row);

function countriesIn(text: string, joined: string): string[] {
  const codes: string[] = [];
  const push = (c: string) => !codes.includes(c) && codes.push(c);
  for (const [code, name, ...aliases] of COUNTRIES) {
    if ([name, ...aliases].some((n) => joined.includes(` ${words(n).join(' ')} `))) push(code);
  }
  // Upper-case codes only: "us" is a pronoun.
  for (const m of text.match(/\b(USA|US|UK|UAE)\b/g) ?? []) push(m === 'UK' ? 'GB' : m === 'UAE' ? 'AE' : 'US');
  for (const [region, list] of Object.entries(REGIONS)) if (joined.includes(` ${region} `)) list.forEach(push);
  return codes.map((c) => COUNTRY_NAME.get(c)!);
}

export function proposeIcp(text: string): IcpProposal {
  const toks = stems(text);
  const have = new Set(toks);
  const joined = ` ${toks.join(' ')} `;
  const roles = rank(ROLES, have, joined, 2);
  const chosenRoles = roles.length ? roles : [ROLES[ROLES.length - 1]];
  const industries = rank(INDUSTRIES, have, joined, 2).map((i) => i.name);
  const size = rank(SIZES, have, joined, 1)[0];
  const countries = countriesIn(text, ` ${words(text).join(' ')} `);
  const keywords = extractKeywords(text, 8);
  const filters: IcpFilters = {
    titles: [...new Set(chosenRoles.flatMap((r) => r.titles))],
    seniorities: [...new Set(chosenRoles.flatMap((r) => r.seniorities))],
    industries: industries.length ? industries : ['Software'],
    countries,
    company_sizes: size ? size.sizes : ['11-50', '51-200'],
    keywords,
  };
  const description =
    `${filters.titles.slice(0, 3).join(', ')} at ${size ? size.words : 'small and mid-sized (11–200 employees)'} ${filters.industries.join(' and ')} companies` +
    `${countries.length ? ` in ${countries.join(', ')}` : ''}` +
    `${keywords.length ? ` who care about ${keywords.slice(0, 3).join(', ')}` : ''}.`;
  return { description, filters };
}

const sentences = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"“])/)
    .map((s) => s.trim())
    .filter(Boolean);
const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1).replace(/\s+\S*$/, '')}…`);
const titleCase = (s: string) => s.replace(/\b\p{L}/gu, (c) => c.toUpperCase());
const VALUE =
  /\b(help|helps|let|lets|save|saves|increase|increases|reduce|reduces|automate|automates|grow|grows|boost|faster|without|so that|in minutes)\b/i;

const PRONOUNS = new Set(['it', 'this', 'we', 'our', 'they', 'he', 'she', 'that', 'there', 'everyone', 'nobody']);

export function profileProduct(text: string, name?: string): ProductProfile {
  const firstLine = text.trim().split('\n')[0].trim();
  const named =
    name?.trim() ||
    (firstLine.length <= 60 && firstLine.split(/\s+/).length <= 6 && !/[.!?]$/.test(firstLine) ? firstLine : '') ||
    [
      ...text.matchAll(
        /\b([A-Z][\p{L}\p{N}]+(?:\s[A-Z][\p{L}\p{N}]+)?)\s+(?:is|helps|lets|makes|gives|turns|finds|offers|provides|automates|connects|brings)\b/gu,
      ),
    ]
      .map((m) => m[1])
      .find((n) => !PRONOUNS.has(n.toLowerCase())) ||
    titleCase(extractKeywords(text, 1)[0] ?? 'Untitled product');
  const body = sentences(
    text
      .trim()
      .split('\n')
      .slice(firstLine === named ? 1 : 0)
      .join(' ') || text,
  );
  const icp = proposeIcp(text);
  const value = body.find((s) => VALUE.test(s));
  const keywords = icp.filters.keywords;
  return {
    name: clip(named, 200),
    description: clip(body.slice(0, 2).join(' ') || named, 300),
    value_proposition: clip(
      value ?? `Helps ${icp.filters.titles[0]}s with ${keywords.slice(0, 2).join(' and ') || 'their work'}.`,
      300,
    ),
    icp_guess: icp.description,
  };
}

// ---------------------------------------------------------------------------------------------
// Search queries

export function searchQueries(keywords: string[], max = 10): string[] {
  const kws = [...new Set(keywords.map((k) => k.trim().toLowerCase()).filter(Boolean))];
  const out = new Set<string>();
  const rounds: ((k: string, i: number) => string | null)[] = [
    (k) => `"${k}"`,
    (k) => `looking for ${k}`,
    (k, i) => (i + 1 < kws.length ? `"${k}" "${kws[i + 1]}"` : null),
    (k) => `${k} recommendations`,
    (k) => `alternative to ${k}`,
  ];
  for (const round of rounds)
    for (const [i, k] of kws.entries()) {
      const q = round(k, i);
      if (q) out.add(q);
    }
  return [...out].slice(0, max);
}

// ---------------------------------------------------------------------------------------------
// Chat

/** The tool the last user message clearly asks for: every word of its name, or three words of its description. */
export function pickTool(message: string, tools: ToolSpec[]): ToolSpec | undefined {
  const have = new Set(stems(message));
  let best: { tool: ToolSpec; score: number } | undefined;
  for (const tool of tools) {
    const name = words(tool.name.replace(/[_.-]/g, ' '))
      .filter((w) => !STOP.has(w))
      .map(stem);
    const nameHits = name.filter((w) => have.has(w)).length;
    const descHits = new Set(phraseStems(tool.description).filter((w) => have.has(w))).size;
    const clear = (name.length > 0 && nameHits === name.length) || descHits >= 3;
    const score = nameHits * 2 + descHits;
    if (clear && (!best || score > best.score)) best = { tool, score };
  }
  return best?.tool;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** Arguments for a tool from the message: `key=value` / `key: value` pairs, and ids for *_id / *Id properties. */
export function toolArgs(message: string, tool: ToolSpec): Record<string, unknown> {
  const props = (tool.parameters.properties ?? {}) as Record<string, { type?: string | string[] }>;
  const args: Record<string, unknown> = {};
  const ids = message.match(UUID) ?? [];
  let nextId = 0;
  for (const [key, spec] of Object.entries(props)) {
    const m = new RegExp(`\\b${key.replace(/[^\w]/g, '')}\\s*[=:]\\s*("([^"]*)"|\\S+)`, 'i').exec(message);
    const type = Array.isArray(spec?.type) ? spec.type.find((t) => t !== 'null') : spec?.type;
    if (m) {
      const raw = m[2] ?? m[1].replace(/[.,;]$/, '');
      args[key] = type === 'integer' || type === 'number' ? Number(raw) : type === 'boolean' ? raw === 'true' : raw;
    } else if (/(_id|Id)$/.test(key) && nextId < ids.length) args[key] = ids[nextId++];
  }
  return args;
}

function chatReply(
  messages: ChatMessage[],
  tools: ToolSpec[],
): { text: string; tool?: { name: string; args: Record<string, unknown> } } {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    const call = [...messages]
      .reverse()
      .flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))
      .find((c) => c.id === last.toolCallId);
    return { text: `Here is what ${call?.name ?? 'the tool'} returned: ${clip(last.content, 600)}` };
  }
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const tool = tools.length ? pickTool(user, tools) : undefined;
  if (tool) return { text: `Calling ${tool.name}.`, tool: { name: tool.name, args: toolArgs(user, tool) } };
  const keywords = extractKeywords(user, 3);
  const parts = [keywords.length ? `You asked about ${keywords.join(', ')}.` : 'How can I help?'];
  if (tools.length)
    parts.push(`I can: ${tools.map((t) => `${t.description.replace(/\.$/, '')} (${t.name})`).join('; ')}.`);
  return { text: parts.join(' ') };
}

// ---------------------------------------------------------------------------------------------
// Unknown tasks: the smallest value the caller's schema accepts.

function minimalOf(s: Record<string, any>): unknown {
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('default' in s) return s.default;
  const alt = s.anyOf ?? s.oneOf;
  if (Array.isArray(alt)) return minimalOf(alt[0]);
  const type = Array.isArray(s.type) ? (s.type.includes('null') ? 'null' : s.type[0]) : s.type;
  switch (type) {
    case 'null':
      return null;
    case 'string':
      return ''.padEnd(s.minLength ?? 0, 'x');
    case 'integer':
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => minimalOf(s.items ?? {}));
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k: string) => [k, minimalOf(s.properties?.[k] ?? {})]));
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The adapter

const textOf = (input: unknown): string =>
  typeof input === 'string'
    ? input
    : Array.isArray(input)
      ? input.map(textOf).join('\n')
      : input && typeof input === 'object'
        ? Object.values(input).map(textOf).join('\n')
        : '';

const field = (input: string | object, key: string): unknown =>
  typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[key] : undefined;

/**
 * The local model's outreach message: a greeting by first name, one line on the product (its value
 * proposition, else its description), the step's intent without template variables, a sign-off.
 * Deterministic for the same input; `variant` picks other openings; cut to `maxLength` at a word.
 */
function localMessage(input: MessageInput): WrittenMessage {
  const first = input.lead.first_name?.trim() || input.lead.full_name?.trim().split(/\s+/)[0] || null;
  const openings = [`Hi ${first ?? 'there'},`, `Hello ${first ?? 'there'},`, `${first ? `${first}, ` : ''}quick note:`];
  const opening = openings[(input.variant ?? 0) % openings.length];
  const company = input.lead.company?.trim();
  const pitch = (input.product.value_proposition || input.product.description || input.product.name)
    .trim()
    .replace(/\s+/g, ' ');
  const intent = (input.intent ?? '')
    .replace(/\{\{[^}]*\}\}/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const parts = input.revise
    ? [
        opening,
        `${input.revise.instructions.trim().replace(/\s+/g, ' ')}:`,
        input.revise.previous.replace(/\{\{[^}]*\}\}/g, '').trim(),
      ]
    : [
        opening,
        company
          ? `I came across ${company} and thought of ${input.product.name}: ${pitch}.`
          : `${input.product.name}: ${pitch}.`,
        intent,
      ];
  if (input.channel !== 'invitation' && input.sender_name) parts.push(`Best, ${input.sender_name}`);
  let body = parts
    .filter(Boolean)
    .join(input.channel === 'invitation' ? ' ' : '\n\n')
    .replace(/\.\.+/g, '.');
  if (body.length > input.maxLength) body = `${body.slice(0, input.maxLength - 1).replace(/\s+\S*$/, '')}…`;
  const example = input.examples[0]?.subject;
  const subject =
    input.channel === 'email'
      ? (
          example?.replace(/\{\{[^}]*\}\}/g, '').trim() || `${input.product.name} for ${company ?? first ?? 'you'}`
        ).slice(0, 150)
      : null;
  return { subject, body };
}

/**
 * The local model's inbox reply: thanks the lead by first name, answers a question (the last inbound
 * message ends with "?") with an offer to talk, follows the instructions when given, signs off.
 * Deterministic for the same input.
 */
function localReply(input: ReplyInput): WrittenMessage {
  const first = input.lead.first_name?.trim() || input.lead.name?.trim().split(/\s+/)[0] || null;
  const last = [...input.history].reverse().find((m) => m.direction === 'in');
  const asked = !!last && /\?\s*$/.test(last.body.trim());
  const parts = [
    `Hi ${first ?? 'there'},`,
    'Thanks for getting back to me.',
    input.instructions?.trim().replace(/\s+/g, ' ') ||
      (asked
        ? 'Good question: happy to walk you through it on a short call this week, if that suits you.'
        : 'Glad to hear from you; let me know what would be most useful next.'),
  ];
  if (input.sender_name) parts.push(`Best, ${input.sender_name}`);
  let body = parts.join('\n\n');
  if (body.length > input.maxLength) body = `${body.slice(0, input.maxLength - 1).replace(/\s+\S*$/, '')}…`;
  return { subject: input.channel === 'email' ? 'Re: our conversation' : null, body };
}

export class LocalModelAdapter implements ModelAdapter {
  readonly name = 'local';
  readonly model = 'local-deterministic-1';

  private answer(task: string, input: string | object, schema: z.ZodType): unknown {
    const max = typeof field(input, 'max') === 'number' ? (field(input, 'max') as number) : undefined;
    switch (task) {
      case 'keywords':
        return { keywords: extractKeywords(textOf(input), max ?? 12) };
      case 'qualify':
        if (typeof input !== 'object' || !field(input, 'candidate'))
          throw new LlmError('bad_request', 'qualify needs an object input with icp and candidate');
        return qualify(input as QualifyInput);
      case 'icp':
        return proposeIcp(textOf(input));
      case 'product_profile': {
        const name = field(input, 'name');
        return profileProduct(
          textOf(typeof input === 'object' ? { ...input, name: undefined } : input),
          typeof name === 'string' ? name : undefined,
        );
      }
      case 'message':
        return localMessage(input as MessageInput);
      case 'reply':
        return localReply(input as ReplyInput);
      case 'queries': {
        const kws = field(input, 'keywords');
        return {
          queries: searchQueries(Array.isArray(kws) ? kws.map(String) : extractKeywords(textOf(input), 6), max ?? 10),
        };
      }
      default:
        try {
          return minimalOf(z.toJSONSchema(schema) as Record<string, unknown>);
        } catch {
          throw new LlmError(
            'unsupported_task',
            `the local model has no rules for "${task}" and cannot describe its schema`,
          );
        }
    }
  }

  async structured<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>> {
    if (req.signal?.aborted) throw new LlmError('aborted', 'the model call was aborted');
    const answer = this.answer(req.task, req.input, req.schema);
    const parsed = req.schema.safeParse(answer);
    if (!parsed.success)
      throw new LlmError('unsupported_task', `the local model cannot answer "${req.task}" with the schema given`);
    const usage: Usage = {
      inputTokens:
        estimateTokens(typeof req.input === 'string' ? req.input : JSON.stringify(req.input)) +
        estimateTokens(req.system ?? ''),
      outputTokens: estimateTokens(JSON.stringify(parsed.data)),
      costMicros: 0,
    };
    return { value: parsed.data, usage };
  }

  async *stream(req: StreamRequest): AsyncIterable<StreamEvent> {
    if (req.signal?.aborted) throw new LlmError('aborted', 'the model call was aborted');
    const reply = chatReply(req.messages, req.tools ?? []);
    // Deltas of a few words each, so consumers exercise the same path as with a remote model.
    const pieces = reply.text.match(/\S+(?:\s+\S+){0,3}\s*/g) ?? [];
    for (const delta of pieces) yield { type: 'text', delta };
    const toolCallCount = req.messages.filter((m) => m.role === 'assistant' && m.toolCalls?.length).length;
    if (reply.tool)
      yield {
        type: 'tool_call',
        call: { id: `call_local_${toolCallCount + 1}`, name: reply.tool.name, args: reply.tool.args },
      };
    const inputTokens = req.messages.reduce((n, m) => n + estimateTokens(m.content ?? ''), 0);
    yield {
      type: 'done',
      usage: { inputTokens, outputTokens: estimateTokens(reply.text), costMicros: 0 },
      finishReason: reply.tool ? 'tool_calls' : 'stop',
    };
  }
}
