// A seeded Hacker News fixture for the stand-in: stories and comments over the last `days` days by a
// few dozen authors, in HN's HTML (entities, <p>, links, <i>), each labelled with the topics it
// mentions — the ground truth a test compares with, rather than re-deriving it with the adapter's
// own rule. Besides real mentions it holds what a search engine finds but a mention is not: words
// that merely start like a topic ("Kubernetescon", found by Algolia's prefix match), comments under
// a story whose title names a topic, deleted items, and items older than the window.
import type { HnItem } from './stand-in.js';

export const TOPICS = ['kubernetes', 'cold email'] as const;
export type Topic = (typeof TOPICS)[number];

export interface HnFixture {
  items: HnItem[];
  /** The topics each item's own text mentions (whole words; a phrase in order). */
  mentions: Map<number, Topic[]>;
  authors: string[];
}

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HANDLES = ['tptacek', 'patio11', 'dang', 'kragen', 'jacquesm', 'pjc50', 'rayiner', 'walterbell', 'cperciva'];
const FILLER = [
  'We tried this last year and it went better than expected.',
  'The hard part was never the tooling, it was the process around it.',
  'I&#x27;d be curious how this holds up at ten times the load.',
  'Our team moved off it after a painful migration.',
  'This matches what I&#x27;ve seen at two different startups.',
  'Has anyone measured the cost of running this in production?',
];
const MENTION: Record<Topic, string[]> = {
  kubernetes: [
    'We run everything on Kubernetes now.',
    'Honestly <i>kubernetes</i> was overkill for our size.',
    'The Kubernetes operator pattern saved us weeks.',
  ],
  'cold email': [
    'Cold email still works if you keep it short.',
    'Our cold-email reply rate doubled after we cut the pitch.',
    'Most cold email tools feel the same to me.',
  ],
};
/** Found by a search engine, mentions nothing by our rule. */
const NEAR_MISS = [
  'See you at Kubernetescon next spring.',
  'Colder emails get colder replies, in my experience.',
  'We emailed them cold turkey.',
];

/**
 * `count` items over the `days` days before `now` (Unix seconds), plus `older` items at least a day
 * before that (outside a window one day longer).
 * About a third are stories; comments reply to an earlier story (or one of its comments).
 */
export function generateHnFixture(opts: {
  seed: number;
  now: number;
  count: number;
  days: number;
  older?: number;
  authors?: number;
}): HnFixture {
  const rnd = mulberry32(opts.seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const authors = Array.from({ length: opts.authors ?? 40 }, (_, i) =>
    i < HANDLES.length ? HANDLES[i] : `hn_user${String(i).padStart(3, '0')}`,
  );
  // Kubernetes is written about by the first two thirds of the authors, cold email alone by the
  // last third: a run that wants kubernetes finds people of both kinds.
  const split = Math.ceil((authors.length * 2) / 3);
  const authorOf = (topics: Topic[]) =>
    topics.includes('kubernetes')
      ? pick(authors.slice(0, split))
      : topics.length
        ? pick(authors.slice(split))
        : pick(authors);
  const items: HnItem[] = [];
  const mentions = new Map<number, Topic[]>();
  const stories: HnItem[] = [];
  const total = opts.count + (opts.older ?? 0);
  // Oldest first, so a comment's story exists and is older.
  for (let i = 0; i < total; i++) {
    const id = 40_000_000 + i * 7;
    const old = i < (opts.older ?? 0);
    const span = opts.days * 86_400;
    const createdAt = old
      ? opts.now - span - 86_400 * (2 + Math.floor(rnd() * 30)) - i
      : opts.now - span + Math.floor(((i - (opts.older ?? 0) + rnd()) / opts.count) * (span - 60));
    const r = rnd();
    const topics: Topic[] =
      r < 0.3 ? ['kubernetes'] : r < 0.42 ? ['cold email'] : r < 0.47 ? ['kubernetes', 'cold email'] : [];
    const sentences = [pick(FILLER)];
    for (const t of topics) sentences.push(pick(MENTION[t]));
    if (topics.length === 0 && rnd() < 0.3) sentences.push(pick(NEAR_MISS));
    sentences.push(pick(FILLER));
    const html =
      sentences.join('<p>') +
      (rnd() < 0.2 ? ' <a href="https://example.com/post" rel="nofollow">https://example.com/post</a>' : '');
    const deleted = rnd() < 0.02;
    const isStory = stories.length === 0 || rnd() < 0.3;
    let item: HnItem;
    if (isStory) {
      // A story's mention may be in its title alone (a link post has no text).
      const linkPost = rnd() < 0.5;
      const title = topics.length
        ? `${pick(['Ask HN: ', 'Show HN: ', ''])}${topics.map((t) => (t === 'kubernetes' ? 'Kubernetes' : 'Cold email')).join(' and ')} ${pick(['in practice', 'at a small company', 'lessons'])}`
        : pick([
            'The economics of tiny teams',
            'A new text editor',
            'Why we left the cloud',
            'Postmortem of an outage',
          ]);
      item = {
        id,
        type: 'story',
        author: deleted ? null : authorOf(topics),
        createdAt,
        title,
        url: linkPost ? `https://blog.example.com/${id}` : null,
        text: linkPost ? null : html,
        points: Math.floor(rnd() * 300),
      };
      if (linkPost && topics.length === 0 && rnd() < 0.5) item.title = `${item.title}: notes from Kubernetescon`;
      stories.push(item);
    } else {
      const story = pick(stories.slice(-20));
      const siblings = items.filter((x) => x.type === 'comment' && x.storyId === story.id);
      const parent = siblings.length && rnd() < 0.4 ? pick(siblings) : story;
      item = {
        id,
        type: 'comment',
        author: deleted ? null : authorOf(topics),
        createdAt,
        text: html,
        parentId: parent.id,
        storyId: story.id,
      };
    }
    items.push(item);
    if (!deleted && !old && topics.length) mentions.set(id, topics);
  }
  return { items, mentions, authors };
}
