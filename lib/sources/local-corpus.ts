// A deterministic, generated world for the local sources: companies, people with titles and
// employers, newsforum posts and comments on topics from a fixed vocabulary, company events and job
// changes. The same (seed, people, anchor day) always gives the same corpus; it is built once per
// process on first use and kept, with the indexes the local sources search by.
//
// Dates are relative to an anchor (default: today, 00:00 UTC) so that "since" filters stay
// meaningful whenever the product runs; ids never depend on dates, so signal keys do not move.
import type { CompanySize, Seniority } from './types.js';
import { buildWordIndex, tokenize, type WordIndex } from './words.js';

export const NETWORK_HOST = 'pronet.example';
export const FORUM_HOST = 'newsforum.example';
/** People beyond this would not fit the local sources' (event, person) reference encoding. */
export const MAX_CORPUS_PEOPLE = 1_000_000;

export interface CorpusCompany {
  id: string;
  name: string;
  slug: string;
  domain: string;
  industry: string;
  size: CompanySize;
  country: string;
}

export interface CorpusPerson {
  id: string;
  firstName: string;
  lastName: string;
  fullName: string;
  slug: string;
  profileUrl: string;
  forumId: string;
  forumUrl: string;
  title: string;
  seniority: Seniority;
  department: string;
  /** Current employer, or the last one when `current` is false. */
  company: number;
  current: boolean;
  country: string;
  email: string | null;
  headline: string;
  /** Started the role at `company` (ISO). */
  startedAt: string;
}

export interface CorpusPost {
  id: string;
  kind: 'post' | 'comment';
  parentId: string | null;
  author: number;
  text: string;
  url: string;
  createdAt: string;
}

export type CompanyEventKind = 'hiring' | 'funding' | 'launch' | 'expansion' | 'acquisition' | 'partnership';

export interface CorpusEvent {
  id: string;
  kind: CompanyEventKind;
  company: number;
  text: string;
  url: string;
  date: string;
}

export interface CorpusJobChange {
  id: string;
  person: number;
  from: number;
  to: number;
  text: string;
  url: string;
  date: string;
}

export interface Corpus {
  seed: number;
  anchor: string;
  companies: CorpusCompany[];
  people: CorpusPerson[];
  /** Newest first. */
  posts: CorpusPost[];
  /** Newest first. */
  events: CorpusEvent[];
  /** Newest first. */
  jobChanges: CorpusJobChange[];
  index: CorpusIndex;
}

export interface CorpusIndex {
  /** Word indexes are built on first use: a process that only searches people never pays for the posts'. */
  readonly posts: WordIndex;
  /** Over each person's headline (title, company, industry, interests). */
  readonly headlines: WordIndex;
  readonly events: WordIndex;
  readonly jobChanges: WordIndex;
  /** Per person: the title's words padded with spaces, for title filters. */
  titleNorm: string[];
  bySeniority: Map<string, number[]>;
  byCountry: Map<string, number[]>;
  /** Lower-case industry → people whose company is in it. */
  byIndustry: Map<string, number[]>;
  bySize: Map<string, number[]>;
  /** Company → its current employees, ascending. */
  employees: number[][];
  /** Lower-case profile slug → person. */
  bySlug: Map<string, number>;
  /** Newsforum handle (the last segment of forumUrl) → person. */
  byForumHandle: Map<string, number>;
}

// ---------------------------------------------------------------------------------------------
// Vocabularies

export const INDUSTRIES = [
  'Software',
  'Fintech',
  'Healthcare',
  'E-commerce',
  'Manufacturing',
  'Logistics',
  'Education',
  'Marketing & Advertising',
  'Cybersecurity',
  'Real Estate',
  'Telecommunications',
  'Energy',
  'Retail',
  'Biotech',
  'Media',
  'Consulting',
  'Insurance',
  'Automotive',
  'Hospitality',
  'Legal Services',
] as const;

// [ISO code, weight, company TLD]
const COUNTRIES: [string, number, string][] = [
  ['US', 22, 'com'],
  ['GB', 8, 'co.uk'],
  ['DE', 8, 'de'],
  ['FR', 6, 'fr'],
  ['IN', 6, 'in'],
  ['CA', 4, 'ca'],
  ['NL', 4, 'nl'],
  ['ES', 3, 'es'],
  ['IT', 3, 'it'],
  ['SE', 3, 'se'],
  ['AU', 3, 'com.au'],
  ['BR', 3, 'com.br'],
  ['IE', 2, 'ie'],
  ['CH', 2, 'ch'],
  ['PL', 2, 'pl'],
  ['DK', 2, 'dk'],
  ['NO', 2, 'no'],
  ['FI', 2, 'fi'],
  ['AT', 2, 'at'],
  ['BE', 2, 'be'],
  ['PT', 2, 'pt'],
  ['SG', 2, 'sg'],
  ['JP', 2, 'jp'],
  ['IL', 2, 'co.il'],
  ['MX', 2, 'mx'],
  ['ZA', 1, 'co.za'],
];

const SIZES: [CompanySize, number, number][] = [
  // [bucket, share of companies, relative head count used to place people]
  ['1-10', 15, 1],
  ['11-50', 25, 2],
  ['51-200', 25, 4],
  ['201-500', 15, 6],
  ['501-1000', 8, 8],
  ['1001-5000', 8, 10],
  ['5001+', 4, 12],
];

const FIRST_NAMES = [
  'James',
  'Mary',
  'John',
  'Patricia',
  'Robert',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Daniel',
  'Karen',
  'Matthew',
  'Emily',
  'Anthony',
  'Laura',
  'Mark',
  'Anna',
  'Paul',
  'Sophie',
  'Lukas',
  'Lea',
  'Jonas',
  'Hannah',
  'Jürgen',
  'Zoë',
  'François',
  'Chloé',
  'Hélène',
  'José',
  'María',
  'Lucía',
  'Sergio',
  'Søren',
  'Ingrid',
  'Björn',
  'Mårten',
  'Åsa',
  'Łukasz',
  'Agnieszka',
  'Siobhán',
  'Seán',
  'Aoife',
  'Priya',
  'Arjun',
  'Ananya',
  'Rahul',
  'Wei',
  'Mei',
  'Hiroshi',
  'Yuki',
  'Kenji',
  'Ngozi',
  'Chidi',
  'Thabo',
  'Lerato',
  'Noa',
  'Yael',
  'Omar',
  'Fatima',
  'João',
  'Inês',
  'Giulia',
  'Marco',
  'Elif',
  'Mehmet',
  'Olga',
  'Dmitri',
  'Camille',
  'Théo',
  'Nora',
  'Emil',
  'Freya',
  'Oskar',
  'Isabel',
  'Tomás',
];

const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Wilson',
  'Anderson',
  'Taylor',
  'Thomas',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Müller',
  'Schmidt',
  'Schneider',
  'Fischer',
  'Weber',
  'Meyer',
  'Wagner',
  'Becker',
  'Dubois',
  'Lefèvre',
  'Moreau',
  'Laurent',
  'García',
  'Fernández',
  'González',
  'Sánchez',
  'Jensen',
  'Nielsen',
  'Hansen',
  'Johansson',
  'Lindqvist',
  'Ødegaard',
  'Kowalski',
  'Wiśniewski',
  'Nowak',
  "O'Brien",
  'Murphy',
  'Kelly',
  'Sharma',
  'Patel',
  'Gupta',
  'Reddy',
  'Wang',
  'Li',
  'Zhang',
  'Chen',
  'Tanaka',
  'Suzuki',
  'Sato',
  'Okafor',
  'Adeyemi',
  'Nkosi',
  'Cohen',
  'Levi',
  'Haddad',
  'Silva',
  'Santos',
  'Costa',
  'Rossi',
  'Russo',
  'Bianchi',
  'Yılmaz',
  'Demir',
  'Ivanova',
  'Petrov',
  'van der Berg',
  'de Vries',
  'Bakker',
  'Janssen',
  'Novák',
  'Horvat',
  'Virtanen',
  'Korhonen',
  'Andersson',
  'Svensson',
];

const NAME_PREFIXES = [
  'Acme',
  'Nimbus',
  'Bright',
  'Vertex',
  'Lumen',
  'Nova',
  'Quantum',
  'Atlas',
  'Beacon',
  'Cobalt',
  'Delta',
  'Ember',
  'Falcon',
  'Granite',
  'Harbor',
  'Iris',
  'Juniper',
  'Kestrel',
  'Lattice',
  'Meridian',
  'North',
  'Orbit',
  'Pioneer',
  'Quill',
  'Ridge',
  'Summit',
  'Tidal',
  'Unity',
  'Vantage',
  'Willow',
  'Zenith',
  'Aurora',
  'Blue',
  'Cedar',
  'Drift',
  'Echo',
  'Flux',
  'Glow',
  'Helix',
  'Ion',
  'Keystone',
  'Lynx',
  'Maple',
  'Nexus',
  'Onyx',
  'Prism',
  'Radiant',
  'Silver',
  'Terra',
  'Umbra',
  'Vela',
  'Wave',
];
const NAME_SUFFIXES = [
  'Labs',
  'Systems',
  'Analytics',
  'Cloud',
  'Works',
  'Dynamics',
  'Health',
  'Logistics',
  'Partners',
  'Software',
  'Robotics',
  'Energy',
  'Capital',
  'Media',
  'Foods',
  'Security',
  'Networks',
  'Bio',
  'Learning',
  'Retail',
  'Motors',
  'Studio',
  'AI',
  'Data',
  'Pay',
  'Legal',
  'Homes',
  'Mobility',
  'Commerce',
  'Insights',
];

// Departments: the individual-contributor title, the executive title, and the topics people there post about.
const DEPARTMENTS: { name: string; ic: string; exec: string; topics: string[] }[] = [
  {
    name: 'Sales',
    ic: 'Account Executive',
    exec: 'Chief Revenue Officer',
    topics: [
      'cold email',
      'outbound',
      'sales automation',
      'lead generation',
      'pipeline',
      'CRM',
      'sales enablement',
      'quota',
    ],
  },
  {
    name: 'Marketing',
    ic: 'Marketing Specialist',
    exec: 'CMO',
    topics: ['content marketing', 'SEO', 'marketing attribution', 'demand generation', 'ABM', 'brand', 'webinars'],
  },
  {
    name: 'Engineering',
    ic: 'Software Engineer',
    exec: 'CTO',
    topics: [
      'kubernetes',
      'TypeScript',
      'postgres',
      'observability',
      'CI/CD',
      'microservices',
      'developer tools',
      'LLM',
    ],
  },
  {
    name: 'Product',
    ic: 'Product Manager',
    exec: 'Chief Product Officer',
    topics: ['product-led growth', 'onboarding', 'user research', 'roadmap', 'pricing', 'activation'],
  },
  {
    name: 'Operations',
    ic: 'Operations Analyst',
    exec: 'COO',
    topics: ['revenue operations', 'supply chain', 'process automation', 'procurement', 'logistics'],
  },
  {
    name: 'Finance',
    ic: 'Financial Analyst',
    exec: 'CFO',
    topics: ['fundraising', 'seed round', 'FP&A', 'payments', 'SaaS metrics', 'burn rate'],
  },
  {
    name: 'People',
    ic: 'Recruiter',
    exec: 'Chief People Officer',
    topics: ['hiring', 'remote work', 'employer branding', 'onboarding', 'retention'],
  },
  {
    name: 'Customer Success',
    ic: 'Customer Success Manager',
    exec: 'Chief Customer Officer',
    topics: ['customer churn', 'customer success', 'NPS', 'renewals', 'support automation'],
  },
  {
    name: 'Data',
    ic: 'Data Scientist',
    exec: 'Chief Data Officer',
    topics: ['data pipelines', 'dbt', 'machine learning', 'analytics', 'data warehouse', 'LLM'],
  },
  {
    name: 'Design',
    ic: 'Product Designer',
    exec: 'Chief Design Officer',
    topics: ['design systems', 'UX research', 'accessibility', 'Figma'],
  },
  {
    name: 'Security',
    ic: 'Security Engineer',
    exec: 'CISO',
    topics: ['SOC 2', 'zero trust', 'cybersecurity', 'identity management', 'compliance'],
  },
  {
    name: 'Legal',
    ic: 'Legal Counsel',
    exec: 'General Counsel',
    topics: ['GDPR', 'compliance', 'contract management', 'AI regulation'],
  },
];
const GENERAL_TOPICS = ['AI agents', 'B2B SaaS', 'startups', 'remote work', 'product launches'];

/** Every topic keyword the corpus' posts are written about. */
export const VOCABULARY: readonly string[] = [...new Set([...DEPARTMENTS.flatMap((d) => d.topics), ...GENERAL_TOPICS])];

const SENIORITY_WEIGHTS: [Seniority, number][] = [
  ['entry', 30],
  ['senior', 25],
  ['manager', 18],
  ['director', 10],
  ['vp', 7],
  ['cxo', 5],
  ['founder', 5],
];

const POST_TEMPLATES = [
  (a: string, b: string, co: string) =>
    `Anyone else struggling with ${a}? At ${co} we tried ${b} and the results were mixed.`,
  (a: string, b: string) => `Hot take: ${a} is overrated unless you get ${b} right first.`,
  (a: string, b: string) => `We just shipped a new approach to ${a}. Happy to share what we learned about ${b}.`,
  (a: string) => `Looking for recommendations: tools for ${a} that work for a small team.`,
  (a: string, b: string) => `What is your playbook for ${a} this year? Ours leans on ${b}.`,
  (a: string, _b: string, co: string) => `Lessons from a year of ${a} at ${co}, thread below.`,
  (a: string, b: string) => `Is ${a} still worth it? Our numbers say yes, but ${b} matters more.`,
];
const COMMENT_TEMPLATES = [
  (a: string) => `Great point about ${a}. We saw the same thing.`,
  (a: string, b: string) => `Disagree: ${a} worked well for us once we fixed ${b}.`,
  (a: string) => `Following. Also curious about ${a}.`,
  (a: string, b: string) => `We use a mix of ${a} and ${b}; happy to compare notes.`,
];
const ROUNDS = ['Pre-seed', 'Seed', 'Series A', 'Series B', 'Series C', 'Series D'];
const INVESTORS = [
  'Northstar Ventures',
  'Granite Capital',
  'Blue Harbor Partners',
  'Seedling Fund',
  'Atlas Growth',
  'Helix Ventures',
];
const PRODUCTS = [
  'an analytics suite',
  'a mobile app',
  'an API platform',
  'a self-serve plan',
  'an AI assistant',
  'a partner program',
];

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: a tiny, fast 32-bit PRNG; plenty for synthetic data. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** A picker over [item, weight] pairs (binary search on cumulative weights). */
  weighted<T>(pairs: readonly (readonly [T, number])[]): () => T {
    const cum: number[] = [];
    let total = 0;
    for (const [, w] of pairs) cum.push((total += w));
    return () => {
      const x = this.next() * total;
      let lo = 0;
      let hi = cum.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cum[mid] > x) hi = mid;
        else lo = mid + 1;
      }
      return pairs[lo][0];
    };
  }
}

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const slugs = new Map<string, string>();

/** ASCII slug: diacritics dropped (NFD), a few letters NFD cannot decompose mapped by hand. Memoised: names come from small pools. */
function asciiSlug(s: string): string {
  let slug = slugs.get(s);
  if (slug === undefined) slugs.set(s, (slug = toAsciiSlug(s)));
  return slug;
}

function toAsciiSlug(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[łŁ]/g, 'l')
    .replace(/[øØ]/g, 'o')
    .replace(/[æÆ]/g, 'ae')
    .replace(/ß/g, 'ss')
    .replace(/ı/g, 'i')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function pushTo(map: Map<string, number[]>, key: string, value: number) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

// ---------------------------------------------------------------------------------------------
// Generation

export interface CorpusOptions {
  seed: number;
  people: number;
  /** Dates are at most this instant; default today 00:00 UTC. */
  anchor?: Date;
}

const todayUtc = () => new Date(Math.floor(Date.now() / DAY) * DAY);

export function generateCorpus(opts: CorpusOptions): Corpus {
  const peopleCount = opts.people;
  if (!Number.isInteger(peopleCount) || peopleCount < 1 || peopleCount > MAX_CORPUS_PEOPLE) {
    throw new Error(`corpus people must be an integer from 1 to ${MAX_CORPUS_PEOPLE}`);
  }
  const anchorMs = (opts.anchor ?? todayUtc()).getTime();
  const rng = new Rng(opts.seed);
  const ago = (maxDays: number) => anchorMs - Math.floor(rng.next() * maxDays * DAY);

  // Companies: about one per ten people (at least 1,000 for the default 12,000 people).
  const companyCount = Math.max(10, Math.round(peopleCount / 10));
  const pickCountry = rng.weighted(COUNTRIES.map(([c, w]) => [c, w] as const));
  const tldOf = new Map(COUNTRIES.map(([c, , tld]) => [c, tld]));
  const pickSize = rng.weighted(SIZES.map(([s, w]) => [s, w] as const));
  const headcountWeight = new Map(SIZES.map(([s, , h]) => [s, h]));
  const companies: CorpusCompany[] = [];
  const usedNames = new Set<string>();
  for (let i = 0; i < companyCount; i++) {
    let name = `${rng.pick(NAME_PREFIXES)} ${rng.pick(NAME_SUFFIXES)}`;
    for (let n = 2; usedNames.has(name); n++)
      name = n === 2 ? `${name} Group` : `${name.replace(/ Group( \d+)?$/, '')} Group ${n}`;
    usedNames.add(name);
    const country = pickCountry();
    const slug = asciiSlug(name);
    const tld = rng.chance(0.6) ? 'com' : (tldOf.get(country) ?? 'com');
    companies.push({
      id: `co_${i}`,
      name,
      slug,
      domain: `${slug.replace(/-/g, '')}.${rng.chance(0.15) ? 'io' : tld}`,
      industry: rng.pick(INDUSTRIES),
      size: pickSize(),
      country,
    });
  }
  const pickCompany = rng.weighted(companies.map((c, i) => [i, headcountWeight.get(c.size)!] as const));
  const pickSeniority = rng.weighted(SENIORITY_WEIGHTS);

  // People.
  const people: CorpusPerson[] = [];
  for (let i = 0; i < peopleCount; i++) {
    const firstName = rng.pick(FIRST_NAMES);
    const lastName = rng.pick(LAST_NAMES);
    const fullName = `${firstName} ${lastName}`;
    const company = pickCompany();
    const co = companies[company];
    let seniority = pickSeniority();
    // Founders run small companies; a 5,000-person company's "founder" is an executive.
    if (seniority === 'founder' && (co.size === '1001-5000' || co.size === '5001+')) seniority = 'cxo';
    const dept = rng.pick(DEPARTMENTS);
    const title = titleFor(rng, dept, seniority);
    const current = !rng.chance(0.12);
    const country = rng.chance(0.8) ? co.country : pickCountry();
    // Slugs are unique through a suffix that is a bijection of the index; some keep their accents.
    const suffix = (Math.imul(i + 1, 0x9e3779b1) >>> 0).toString(36);
    const unicode = /[^\x20-\x7e]/.test(fullName) && rng.chance(0.3);
    const slug = unicode
      ? `${firstName}-${lastName}`
          .normalize('NFC')
          .toLowerCase()
          .replace(/[\s']+/g, '-') + `-${suffix}`
      : `${asciiSlug(firstName)}-${asciiSlug(lastName)}-${suffix}`;
    const [a, b] = [rng.pick(dept.topics), rng.pick(rng.chance(0.7) ? dept.topics : GENERAL_TOPICS)];
    const interests = a === b ? a : `${a}, ${b}`;
    const headline = current
      ? `${title} at ${co.name} · ${co.industry} · ${interests}`
      : `${title}, formerly at ${co.name} · open to new roles · ${interests}`;
    let email: string | null = null;
    if (current && rng.chance(0.35)) {
      const f = asciiSlug(firstName).replace(/-/g, '');
      const l = asciiSlug(lastName).replace(/-/g, '');
      email = `${rng.pick([`${f}.${l}`, f, `${f[0]}${l}`])}@${co.domain}`;
    }
    people.push({
      id: `pn_${i}`,
      firstName,
      lastName,
      fullName,
      slug,
      profileUrl: `https://${NETWORK_HOST}/in/${encodeURIComponent(slug)}`,
      forumId: `nf_u${i}`,
      forumUrl: `https://${FORUM_HOST}/u/${asciiSlug(firstName)}_${suffix}`,
      title,
      seniority,
      department: dept.name,
      company,
      current,
      country,
      email,
      headline,
      startedAt: iso(ago(8 * 365)),
    });
  }

  // Job changes: about one current employee in ten started at their company in the last two years.
  const jobChanges: CorpusJobChange[] = [];
  for (let i = 0; i < peopleCount && companyCount > 1; i++) {
    const p = people[i];
    if (!p.current || !rng.chance(0.1)) continue;
    let from = rng.int(0, companyCount - 1);
    if (from === p.company) from = (from + 1) % companyCount;
    p.startedAt = iso(ago(730));
    const to = companies[p.company];
    jobChanges.push({
      id: `jc_${jobChanges.length}`,
      person: i,
      from,
      to: p.company,
      text: `${p.fullName} started as ${p.title} at ${to.name}, previously at ${companies[from].name}.`,
      url: `${p.profileUrl}/details/experience`,
      date: p.startedAt,
    });
  }

  // Posts and comments: 45 % of people post (1-4 posts each); each post gets 0-3 comments.
  const posts: CorpusPost[] = [];
  const posters: number[] = [];
  for (let i = 0; i < peopleCount; i++) if (rng.chance(0.45)) posters.push(i);
  let commentN = 0;
  for (const author of posters) {
    const p = people[author];
    const dept = DEPARTMENTS.find((d) => d.name === p.department)!;
    for (let k = rng.int(1, 4); k > 0; k--) {
      const [a, b] = twoTopics(rng, dept.topics);
      const id = `nf_p${posts.length - commentN}`;
      const created = ago(365);
      posts.push({
        id,
        kind: 'post',
        parentId: null,
        author,
        text: rng.pick(POST_TEMPLATES)(a, b, companies[p.company].name),
        url: `https://${FORUM_HOST}/t/${id}`,
        createdAt: iso(created),
      });
      for (let c = rng.int(0, 3); c > 0 && posters.length > 1; c--) {
        const commenter = posters[rng.int(0, posters.length - 1)];
        const cdept = DEPARTMENTS.find((d) => d.name === people[commenter].department)!;
        const [x, y] = twoTopics(rng, rng.chance(0.5) ? dept.topics : cdept.topics);
        const cid = `nf_c${commentN++}`;
        posts.push({
          id: cid,
          kind: 'comment',
          parentId: id,
          author: commenter,
          text: rng.pick(COMMENT_TEMPLATES)(x, y),
          url: `https://${FORUM_HOST}/t/${id}#${cid}`,
          createdAt: iso(Math.min(anchorMs, created + Math.floor(rng.next() * 3 * DAY))),
        });
      }
    }
  }

  // Company events.
  const events: CorpusEvent[] = [];
  const addEvent = (kind: CompanyEventKind, company: number, text: string) => {
    const id = `ev_${events.length}`;
    events.push({
      id,
      kind,
      company,
      text,
      url: `https://${NETWORK_HOST}/company/${companies[company].slug}/posts/${id}`,
      date: iso(ago(365)),
    });
  };
  for (let c = 0; c < companyCount; c++) {
    const co = companies[c];
    for (let k = rng.chance(0.5) ? rng.int(1, 2) : 0; k > 0; k--) {
      const dept = rng.pick(DEPARTMENTS);
      addEvent(
        'hiring',
        c,
        `${co.name} is hiring ${rng.int(2, 25)} people in ${dept.name}, including a ${titleFor(rng, dept, rng.pick(['manager', 'director', 'vp'] as const))}.`,
      );
    }
    if (rng.chance(0.2)) {
      addEvent(
        'funding',
        c,
        `${co.name} raised a ${rng.pick(ROUNDS)} of $${rng.int(1, 120)}M led by ${rng.pick(INVESTORS)}.`,
      );
    }
    if (rng.chance(0.25))
      addEvent('launch', c, `${co.name} launched ${rng.pick(PRODUCTS)} for ${rng.pick(VOCABULARY)}.`);
    if (rng.chance(0.1))
      addEvent(
        'expansion',
        c,
        `${co.name} opened an office in ${pickCountry()} and is expanding its ${rng.pick(DEPARTMENTS).name} team.`,
      );
    if (rng.chance(0.04))
      addEvent('acquisition', c, `${co.name} acquired ${companies[rng.int(0, companyCount - 1)].name}.`);
    if (rng.chance(0.1))
      addEvent(
        'partnership',
        c,
        `${co.name} partners with ${companies[rng.int(0, companyCount - 1)].name} on ${rng.pick(VOCABULARY)}.`,
      );
  }

  // Newest first; ties by id so the order never depends on the sort's stability.
  const byDateDesc = (da: string, db: string, ia: string, ib: string) =>
    da < db ? 1 : da > db ? -1 : ia < ib ? -1 : ia > ib ? 1 : 0;
  posts.sort((x, y) => byDateDesc(x.createdAt, y.createdAt, x.id, y.id));
  events.sort((x, y) => byDateDesc(x.date, y.date, x.id, y.id));
  jobChanges.sort((x, y) => byDateDesc(x.date, y.date, x.id, y.id));

  return {
    seed: opts.seed,
    anchor: iso(anchorMs),
    companies,
    people,
    posts,
    events,
    jobChanges,
    index: buildIndex(companies, people, posts, events, jobChanges),
  };
}

function titleFor(rng: Rng, dept: (typeof DEPARTMENTS)[number], seniority: Seniority): string {
  switch (seniority) {
    case 'entry':
      return dept.ic;
    case 'senior':
      return rng.chance(0.7) ? `Senior ${dept.ic}` : `Lead ${dept.ic}`;
    case 'manager':
      return `${dept.name} Manager`;
    case 'director':
      return rng.chance(0.5) ? `Director of ${dept.name}` : `Head of ${dept.name}`;
    case 'vp':
      return `VP of ${dept.name}`;
    case 'cxo':
      return dept.exec;
    case 'founder':
      return rng.pick(['Founder & CEO', 'Co-founder', `Co-founder & ${dept.exec}`]);
  }
}

function twoTopics(rng: Rng, topics: readonly string[]): [string, string] {
  const a = rng.pick(rng.chance(0.85) ? topics : GENERAL_TOPICS);
  let b = rng.pick(topics);
  if (b === a) b = rng.pick(GENERAL_TOPICS);
  return [a, b];
}

function buildIndex(
  companies: CorpusCompany[],
  people: CorpusPerson[],
  posts: CorpusPost[],
  events: CorpusEvent[],
  jobChanges: CorpusJobChange[],
): CorpusIndex {
  const bySeniority = new Map<string, number[]>();
  const byCountry = new Map<string, number[]>();
  const byIndustry = new Map<string, number[]>();
  const bySize = new Map<string, number[]>();
  const employees: number[][] = companies.map(() => []);
  const bySlug = new Map<string, number>();
  const byForumHandle = new Map<string, number>();
  const titleNorm = new Array<string>(people.length);
  const titleWords = new Map<string, string>(); // titles come from a small set
  for (let i = 0; i < people.length; i++) {
    const p = people[i];
    const co = companies[p.company];
    pushTo(bySeniority, p.seniority, i);
    pushTo(byCountry, p.country, i);
    pushTo(byIndustry, co.industry.toLowerCase(), i);
    pushTo(bySize, co.size, i);
    if (p.current) employees[p.company].push(i);
    bySlug.set(p.slug.toLowerCase(), i);
    byForumHandle.set(p.forumUrl.slice(p.forumUrl.lastIndexOf('/') + 1), i);
    let norm = titleWords.get(p.title);
    if (norm === undefined) titleWords.set(p.title, (norm = ` ${tokenize(p.title).join(' ')} `));
    titleNorm[i] = norm;
  }
  const lazy = (make: () => WordIndex) => {
    let built: WordIndex | undefined;
    return { get: () => (built ??= make()), enumerable: true };
  };
  return Object.defineProperties(
    {
      titleNorm,
      bySeniority,
      byCountry,
      byIndustry,
      bySize,
      employees,
      bySlug,
      byForumHandle,
    },
    {
      posts: lazy(() => buildWordIndex(posts.map((p) => p.text))),
      headlines: lazy(() => buildWordIndex(people.map((p) => p.headline))),
      events: lazy(() => buildWordIndex(events.map((e) => e.text))),
      jobChanges: lazy(() => buildWordIndex(jobChanges.map((j) => j.text))),
    },
  ) as CorpusIndex;
}

// ---------------------------------------------------------------------------------------------
// One corpus per (seed, people, anchor day) per process, built on first use.

const cache = new Map<string, Corpus>();

export function getCorpus(opts: CorpusOptions): Corpus {
  const anchor = opts.anchor ?? todayUtc();
  const key = `${opts.seed}:${opts.people}:${anchor.getTime()}`;
  let corpus = cache.get(key);
  if (!corpus) {
    if (cache.size >= 4) cache.delete(cache.keys().next().value!); // tests build a few; a service uses one
    corpus = generateCorpus({ ...opts, anchor });
    cache.set(key, corpus);
  }
  return corpus;
}
