// One name per kind of id in the OpenAPI document and in error details: an id in a path is named
// after the collection it follows, singular, with `Id` (`/api/campaigns/{id}` and
// `/api/campaigns/{campaignId}/steps` both take `campaignId`; `{taskID}` → `taskId`). Declarations
// keep their short names (`{id}` in a module about campaigns); the document and the router's
// `invalid_id` details say the public one, so a client sees one name wherever the id appears.

/** Path parameters that are not ids of a collection (a token, a provider name, an index…). */
const NOT_IDS = new Set(['token', 'provider', 'source', 'index', 'operation']);

/** Collections whose path word is not their kind's name. */
const KINDS: Record<string, string> = { outbound: 'webhook' };

/** Where the collection before the id does not name its kind (the booking hook is per provider). */
const KEPT = new Set(['/hooks/booking/{providerId}']);

const camel = (word: string) =>
  word
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w))
    .join('');

const singular = (w: string) =>
  w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.endsWith('ss') || !w.endsWith('s') ? w : w.slice(0, -1);

/** Declared name → public name, for each parameter of a declared path. */
export function pathParamNames(path: string): Map<string, string> {
  const names = new Map<string, string>();
  if (KEPT.has(path)) return names;
  const segments = path.split('/');
  segments.forEach((s, i) => {
    if (!s.startsWith('{')) return;
    const name = s.slice(1, -1);
    const before = segments[i - 1];
    if (NOT_IDS.has(name) || !before || before.startsWith('{')) return;
    names.set(name, `${KINDS[before] ?? camel(singular(before))}Id`);
  });
  return names;
}

/** The path as the document writes it (`/api/campaigns/{campaignId}`). */
export function documentPath(path: string): string {
  const names = pathParamNames(path);
  return path.replace(/\{([^}]+)\}/g, (m, n: string) => (names.has(n) ? `{${names.get(n)}}` : m));
}
