import { z } from 'zod';
import { IDEA_BODY_MAX, IDEA_SORTS, IDEA_TITLE_MAX, type IdeaCursor, type IdeaRow } from '../../domain/ideas/ideas.js';
import { pageQuery } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** `v<votes>.<id>` (sorted by votes) or `r.<id>` (by recency): where the next page starts. */
const CURSOR = new RegExp(`^(?:v(?:0|[1-9][0-9]{0,8})|r)\\.${UUID}$`);

export const toIdeaCursor = (c: IdeaCursor): string => (c.sort === 'votes' ? `v${c.votes}.${c.id}` : `r.${c.id}`);

function fromIdeaCursor(s: string): IdeaCursor {
  const [head, id] = s.split('.');
  return head === 'r' ? { sort: 'recent', id } : { sort: 'votes', votes: Number(head.slice(1)), id };
}

export const IdeasQuery = z
  .object({
    sort: z
      .enum(IDEA_SORTS)
      .default('votes')
      .meta({ description: '`votes`: most voted first, ties newest first; `recent`: newest first' }),
    mine: z.enum(['true', 'false']).optional().meta({ description: '`true`: only the ideas the caller posted' }),
    limit: pageQuery.limit,
    cursor: z.string().regex(CURSOR, 'invalid cursor').optional().meta({
      description:
        'The `next_cursor` of the previous page, with the same `sort` (`v…` continues `votes`, `r…` continues `recent`; the other sort is 400)',
    }),
  })
  .strict()
  .transform((q, ctx) => {
    if (!q.cursor) return { ...q, cursor: undefined };
    const c = fromIdeaCursor(q.cursor);
    if (c.sort !== q.sort) {
      ctx.addIssue({ code: 'custom', path: ['cursor'], message: `this cursor continues sort=${c.sort}` });
      return z.NEVER;
    }
    return { ...q, cursor: c };
  });

const Title = text({ max: IDEA_TITLE_MAX, min: 1, trim: true });
const Body = text({ max: IDEA_BODY_MAX, trim: true });

export const NewIdeaBody = z.object({ title: Title, body: Body.default('') }).strict();
export const IdeaChangeBody = z
  .object({ title: Title.optional(), body: Body.optional() })
  .strict()
  .refine((b) => b.title !== undefined || b.body !== undefined, { message: 'give title and/or body' })
  .meta({ minProperties: 1 });

export const IdeaView = z.object({
  id: z.uuid(),
  title: z.string(),
  body: z.string(),
  vote_count: z.number().int().min(0),
  voted: z.boolean().meta({ description: 'Whether the caller voted for it' }),
  mine: z.boolean().meta({
    description:
      'Whether the caller posted it (only the author may edit or delete it). Nothing else about the author is shown.',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toIdeaView = (i: IdeaRow): z.infer<typeof IdeaView> => ({
  id: i.id,
  title: i.title,
  body: i.body,
  vote_count: i.vote_count,
  voted: i.voted,
  mine: i.mine,
  created_at: new Date(i.created_at).toISOString(),
  updated_at: new Date(i.updated_at).toISOString(),
});

export const IdeaPage = z.object({ items: z.array(IdeaView), next_cursor: z.string().regex(CURSOR).nullable() });
export const VoteView = IdeaView.extend({
  changed: z.boolean().meta({ description: 'Whether this call changed the caller’s vote (false on a repeat)' }),
});
