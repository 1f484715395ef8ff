// Examples for the OpenAPI document: one value per schema, built from the schema itself so it cannot
// drift from what the server accepts and answers. A schema's own `examples` (written by hand with
// `.meta({ examples })`) win; otherwise the value follows from const/enum/default, the format, a
// pattern (the first of a list of realistic strings that matches it) and the property's name.
// test/api/openapi-examples.test.ts validates every example against its schema.

type Json = Record<string, unknown>;

const UUID = '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a01';
const DATE_TIME = '2026-11-27T09:00:00.000Z';

/** Strings tried, in order, against a pattern no name or format settles. */
const CANDIDATES = [
  'example',
  'Example',
  'Example text',
  'ada@example.com',
  'https://example.com/webhooks/outreach',
  UUID,
  DATE_TIME,
  '2026-11-27',
  '09:00',
  'US',
  'en-US',
  'example-slug',
  'example.com',
  'Example 1',
  '+1 555 0100',
  'AAAAAAAAAAAAAAAAAAAAAA',
  '1764234000000_0123456789abcdef0123456789abcdef',
  `v1.${UUID}`,
  'awaiting_review',
  'sales',
];

/** Realistic values for common property names (used when they fit the schema). */
const BY_NAME: Record<string, unknown> = {
  email: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  name: 'Example name',
  full_name: 'Ada Lovelace',
  company: 'Analytical Engines Ltd',
  company_name: 'Analytical Engines Ltd',
  title: 'CTO',
  headline: 'CTO at Analytical Engines',
  url: 'https://example.com',
  website: 'https://example.com',
  domain: 'example.com',
  country: 'GB',
  time_zone: 'Europe/London',
  timezone: 'Europe/London',
  subject: 'Quick question about your hiring plans',
  body: 'Hi Ada, I noticed you are hiring engineers. Would a short call next week help?',
  message: 'Thanks for reaching out. Happy to talk next week.',
  password: 'correct horse battery staple',
  currency: 'EUR',
};

const fits = (value: string, s: Json): boolean => {
  const length = [...value].length;
  if (typeof s.minLength === 'number' && length < s.minLength) return false;
  if (typeof s.maxLength === 'number' && length > s.maxLength) return false;
  if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
  return true;
};

const FORMATS: Record<string, string> = {
  uuid: UUID,
  'date-time': DATE_TIME,
  date: '2026-11-27',
  email: 'ada@example.com',
  uri: 'https://example.com',
  binary: '(file bytes)',
};

function exampleString(s: Json, name: string | undefined): string {
  const candidates = [
    ...(typeof s.format === 'string' && FORMATS[s.format] ? [FORMATS[s.format]] : []),
    ...(name && typeof BY_NAME[name] === 'string' ? [BY_NAME[name] as string] : []),
    ...(name?.endsWith('_id') ? [UUID] : []),
    ...(name?.endsWith('_at') ? [DATE_TIME] : []),
    ...(name?.endsWith('_url') ? ['https://example.com'] : []),
    ...CANDIDATES,
  ];
  const found = candidates.find((c) => fits(c, s));
  if (found !== undefined) return found;
  // A length range no candidate fits: repeat a letter (patterns here exclude only NUL and blanks).
  const n = typeof s.minLength === 'number' ? s.minLength : 1;
  const padded = 'x'.repeat(Math.max(n, 1));
  if (fits(padded, s)) return padded;
  throw new Error(`no example string for ${JSON.stringify(s).slice(0, 200)}: give the schema .meta({ examples })`);
}

/** A small, realistic count (3) or amount within the bounds: not zod's ±2^53 limits. */
function exampleNumber(s: Json, integer: boolean): number {
  let n = integer ? 3 : 1.5;
  if (typeof s.minimum === 'number' && n < s.minimum) n = s.minimum;
  if (typeof s.exclusiveMinimum === 'number' && n <= s.exclusiveMinimum) n = s.exclusiveMinimum + 1;
  if (typeof s.maximum === 'number' && n > s.maximum) n = s.maximum;
  if (typeof s.exclusiveMaximum === 'number' && n >= s.exclusiveMaximum) n = s.exclusiveMaximum - 1;
  return integer ? Math.ceil(n) : n;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** allOf parts narrow one value: objects merge key by key, a later scalar (an enum's value) wins. */
const merge = (a: unknown, b: unknown): unknown =>
  isObject(a) && isObject(b)
    ? Object.fromEntries(
        [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [
          k,
          k in b ? (k in a ? merge(a[k], b[k]) : b[k]) : a[k],
        ]),
      )
    : b;

/**
 * An example value of `schema`; `components` resolves `#/components/schemas/…` references. Every
 * property is filled, optional ones included, so an example shows the whole shape.
 */
export function exampleOf(schema: unknown, components: Record<string, Json>, name?: string, depth = 0): unknown {
  if (depth > 24) throw new Error('example: schema too deep');
  const s = (schema ?? {}) as Json;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('default' in s && s.default !== undefined) return s.default;
  if (typeof s.$ref === 'string') {
    const target = components[s.$ref.replace('#/components/schemas/', '')];
    if (!target) throw new Error(`example: unknown reference ${s.$ref}`);
    return exampleOf(target, components, name, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    return s.allOf.map((part) => exampleOf(part, components, name, depth + 1)).reduce(merge);
  }
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (branches && !s.type && !s.properties) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0];
    return exampleOf(branch, components, name, depth + 1);
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : [];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  if (name && name in BY_NAME && typeof BY_NAME[name] !== 'string' && type) return BY_NAME[name];
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [key, prop] of Object.entries((s.properties ?? {}) as Json))
        out[key] = exampleOf(prop, components, key, depth + 1);
      // A record with required keys (an enum of keys): each takes the value schema.
      for (const key of (s.required ?? []) as string[])
        if (!(key in out)) out[key] = exampleOf(s.additionalProperties, components, key, depth + 1);
      // "Exactly one of" (oneOf over `required` lists): keep the first alternative's fields only.
      if (Array.isArray(s.oneOf) && s.oneOf.every((b: Json) => Object.keys(b).every((k) => k === 'required'))) {
        const [first, ...others] = s.oneOf as { required: string[] }[];
        for (const other of others)
          for (const key of other.required)
            if (!first.required.includes(key) && !((s.required ?? []) as string[]).includes(key)) delete out[key];
      }
      return out;
    }
    case 'array': {
      const count = Math.max(typeof s.minItems === 'number' ? s.minItems : 1, 1);
      if (typeof s.maxItems === 'number' && s.maxItems === 0) return [];
      const item = exampleOf(s.items, components, name, depth + 1);
      return Array.from({ length: count }, () => item);
    }
    case 'string':
      return exampleString(s, name);
    case 'integer':
      return exampleNumber(s, true);
    case 'number':
      return exampleNumber(s, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      // Any JSON value.
      return { key: 'value' };
  }
}
