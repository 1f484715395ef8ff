// The ideas board (docs/ideas-views-onboarding.md): feature requests shared by every workspace. What
// another workspace's people see of an idea is what the author's own do: title, body, votes, times —
// never who wrote or voted for it.
import { createIdea, deleteIdea, listIdeas, unvote, updateIdea, vote } from '../../domain/ideas/ideas.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  IdeaChangeBody,
  IdeaPage,
  IdeaView,
  IdeasQuery,
  NewIdeaBody,
  VoteView,
  toIdeaCursor,
  toIdeaView,
} from './schemas.js';

const tag = 'ideas';
const auth = { 401: ['unauthorized'] };

export const listIdeasOp = defineOperation({
  method: 'GET',
  path: '/api/ideas',
  summary: 'The ideas board (every workspace’s ideas), most voted or newest first; each says whether the caller voted',
  tag,
  auth: 'user',
  query: IdeasQuery,
  responses: { 200: IdeaPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) => {
    const rows = await listIdeas(em, actor, {
      sort: query.sort,
      limit: query.limit,
      cursor: query.cursor,
      mine: query.mine === 'true',
    });
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    const next =
      rows.length > query.limit && last
        ? toIdeaCursor(
            query.sort === 'votes'
              ? { sort: 'votes', votes: last.vote_count, id: last.id }
              : { sort: 'recent', id: last.id },
          )
        : null;
    return { items: items.map(toIdeaView), next_cursor: next };
  },
});

export const createIdeaOp = defineOperation({
  method: 'POST',
  path: '/api/ideas',
  summary: 'Post an idea to the shared board',
  tag,
  auth: 'user',
  body: NewIdeaBody,
  responses: { 201: IdeaView },
  errors: { 400: ['invalid_body', 'invalid_user'], ...auth, 403: ['demo_read_only'], 429: ['idea_limit_reached'] },
  handler: async ({ em, actor, body }) => reply(201, toIdeaView(await createIdea(em, actor, body))),
});

export const updateIdeaOp = defineOperation({
  method: 'PUT',
  path: '/api/ideas/{id}',
  ids: { path: { id: { value: 'an idea of the board every user shares (authorship checked where it matters)' } } },
  summary: 'Change the title and/or body of your idea (votes stay); 403 not_author for someone else’s',
  tag,
  auth: 'user',
  params: IdParams,
  body: IdeaChangeBody,
  responses: { 200: IdeaView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_author', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toIdeaView(await updateIdea(em, actor, params.id, body)),
});

export const deleteIdeaOp = defineOperation({
  method: 'DELETE',
  path: '/api/ideas/{id}',
  ids: { path: { id: { value: 'an idea of the board every user shares (authorship checked where it matters)' } } },
  summary: 'Delete your idea and its votes; 403 not_author for someone else’s',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_author', 'demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    await deleteIdea(em, actor, params.id);
    return reply(204);
  },
});

export const voteIdeaOp = defineOperation({
  method: 'POST',
  path: '/api/ideas/{id}/vote',
  ids: { path: { id: { value: 'an idea of the board every user shares (authorship checked where it matters)' } } },
  summary: 'Vote for an idea: one vote per person (a repeat changes nothing)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: VoteView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const r = await vote(em, actor, params.id);
    return { ...toIdeaView(r.idea), changed: r.changed };
  },
});

export const unvoteIdeaOp = defineOperation({
  method: 'DELETE',
  path: '/api/ideas/{id}/vote',
  ids: { path: { id: { value: 'an idea of the board every user shares (authorship checked where it matters)' } } },
  summary: 'Withdraw your vote (idempotent)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: VoteView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const r = await unvote(em, actor, params.id);
    return { ...toIdeaView(r.idea), changed: r.changed };
  },
});
