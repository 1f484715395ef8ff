// The operationId of every operation, by one rule: a verb, then the resource it acts on, in camelCase
// (`createCampaign`, `listCampaignEnrollments`, `approveDiscoveredLead`). Generated SDKs name their
// methods after it, metrics label requests with it, and tests key on it, so it is derived here and
// nowhere else; a declaration names its own only where the path cannot say it (`operationId` in the
// spec, e.g. the hooks and the tracking pixel), and that name must follow the same shape.
//
// The rule, on the path without `/api` and its `{params}`:
// - a last segment that is an action (`…/{id}/approve`, `…/batch-approve`) is the verb, and the
//   resource before it the noun: `POST /discovered-leads/{id}/approve` → `approveDiscoveredLead`;
//   the action's other words follow the noun (`generate-all-messages` → `generateCampaignAllMessages`);
//   a GET only reads, so its last word is always a noun;
// - otherwise the method is the verb: GET of a collection `list`, of one thing `get`, POST `create`,
//   PUT/PATCH `update`, DELETE `delete`;
// - a segment followed by its id is singular (`campaigns/{id}/steps` → `CampaignSteps`), as is what is
//   created; a few path words read as one (`users/me` → `Me`, `webhooks/outbound` → `Webhooks`).

/** Verbs an action segment may start with (its first word). */
const ACTIONS = new Set([
  'accept',
  'analyze',
  'apply',
  'approve',
  'attach',
  'backfill',
  'batch',
  'bulk',
  'cancel',
  'change',
  'commit',
  'complete',
  'confirm',
  'connect',
  'dismiss',
  'duplicate',
  'edit',
  'enrich',
  'enroll',
  'generate',
  'import',
  'inspect',
  'install',
  'join',
  'launch',
  'login',
  'logout',
  'mark',
  'preflight',
  'preview',
  'promote',
  'quote',
  'read',
  'reenroll',
  'refresh',
  'register',
  'reject',
  'reorder',
  'reply',
  'reschedule',
  'resolve',
  'retry',
  'revise',
  'rotate',
  'save',
  'signup',
  'skip',
  'start',
  'sync',
  'test',
  'verify',
]);

/** Verbs an operationId may start with: the methods' and the actions'. */
export const OPERATION_VERBS = new Set([
  ...ACTIONS,
  ...['list', 'get', 'create', 'update', 'delete'],
  // Declared names only (`operationId` in a declaration).
  ...['add', 'remove', 'receive', 'track', 'unsubscribe', 'leave', 'click', 'control'],
]);

/** Words that are not plurals, or whose singular is not the rule's. */
const SINGULAR: Record<string, string> = {
  activities: 'activity',
  replies: 'reply',
  analytics: 'analytics',
  stats: 'stats',
  counts: 'counts',
  settings: 'settings',
  status: 'status',
  progress: 'progress',
  metrics: 'metrics',
  results: 'results',
  features: 'features',
  limits: 'limits',
  capabilities: 'capabilities',
  outcomes: 'outcomes',
  preferences: 'preferences',
  me: 'me',
};

/** Path words read as one (`users/me` is the caller). */
const ALIASES: [RegExp, string][] = [
  [/^users\/me(?=\/|$)/, 'me'],
  [/^user(?=\/)/, 'me'],
  [/^webhooks\/outbound(?=\/|$)/, 'webhooks'],
  [/^auth(?=\/(login|logout|refresh|signup)$)/, ''],
];

/** The singular of a path word, by its last word (`email-settings` stays, `import-drafts` → `import-draft`). */
function singular(word: string): string {
  const at = word.lastIndexOf('-') + 1;
  const w = word.slice(at);
  const one =
    SINGULAR[w] ??
    (w.endsWith('ies')
      ? `${w.slice(0, -3)}y`
      : w.endsWith('ss') || w.endsWith('us') || !w.endsWith('s')
        ? w
        : w.slice(0, -1));
  return word.slice(0, at) + one;
}

const words = (s: string) => s.split(/[^a-zA-Z0-9]+/).filter(Boolean);
const camel = (ws: string[]) => ws.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
/** `me` reads `my` before what it owns (`listMyWorkspaces`), `me` alone (`getMe`). */
const possessive = (ws: string[]) => ws.map((w, i) => (w === 'me' && i < ws.length - 1 ? 'my' : w));

/** The rule's operationId for a method and a path. */
export function operationIdOf(method: string, path: string): string {
  let rest = path.replace(/^\/api\//, '').replace(/^\//, '');
  for (const [from, to] of ALIASES) rest = rest.replace(from, to);
  const segments = rest.split('/').filter(Boolean);
  // Literal segments, each marked when an id follows it.
  const items: { word: string; byId: boolean }[] = [];
  for (const s of segments) {
    if (s.startsWith('{')) {
      if (items.length) items[items.length - 1].byId = true;
    } else items.push({ word: s, byId: false });
  }
  const endsWithId = segments[segments.length - 1]?.startsWith('{') ?? false;
  const last = items[items.length - 1];
  // A GET only reads: its last word is a noun (`promote-status`, `sync`).
  const action =
    method !== 'GET' && !endsWithId && last && ACTIONS.has(words(last.word)[0]) ? words(last.word) : undefined;
  if (action) items.pop();
  const nouns = items.flatMap(({ word, byId }, i) => {
    const isLast = i === items.length - 1;
    const one = byId || !isLast || (!action && method === 'POST' && !endsWithId);
    return words(one ? singular(word) : word);
  });
  if (action) {
    // `batch-approve`, `bulk-promote`: the two words are the verb.
    const verbWords = action[0] === 'batch' || action[0] === 'bulk' ? action.slice(0, 2) : action.slice(0, 1);
    const more = action.slice(verbWords.length);
    const verb = verbWords[0] + camel(verbWords.slice(1));
    return method === 'DELETE'
      ? `delete${camel(possessive([...nouns, ...action]))}`
      : verb + camel(possessive([...nouns, ...more]));
  }
  const lastWord = items[items.length - 1]?.word ?? '';
  const collection = !endsWithId && singular(lastWord) !== lastWord;
  const verb =
    method === 'GET'
      ? collection
        ? 'list'
        : 'get'
      : method === 'POST'
        ? 'create'
        : method === 'DELETE'
          ? 'delete'
          : 'update';
  return verb + camel(possessive(nouns));
}

/** The shape every operationId has, declared or derived: a known verb, then camel-cased words. */
export function checkOperationId(id: string): string | undefined {
  if (!/^[a-z]+(?:[A-Z][a-z0-9]*)*$/.test(id)) return 'not camelCase letters and digits';
  if (id.length > 48) return 'longer than 48 characters';
  const verb = /^[a-z]+/.exec(id)![0];
  const known = [...OPERATION_VERBS].some((v) => verb === v || id.startsWith(v));
  if (!known) return `does not start with a verb of OPERATION_VERBS (${verb})`;
  return undefined;
}
