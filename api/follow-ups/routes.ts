// Follow-ups (docs/follow-ups.md): reminders that a lead waits for an answer or a meeting for its
// outcome, their pending count, completion and dismissal per lead, and notes per lead.
import {
  addNote,
  completeReminder,
  dismissLead,
  listFollowUps,
  listNotes,
  pendingCount,
} from '../../domain/follow-ups/follow-ups.js';
import { keysetPage } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  DismissView,
  FollowUpPage,
  FollowUpsQuery,
  FollowUpView,
  LeadParams,
  NoteBody,
  NotePage,
  NotesQuery,
  NoteView,
  PendingCountView,
  toFollowUp,
  toNote,
} from './schemas.js';

const tag = 'follow-ups';
// Every id a route takes (path or filter) is checked by domain/access.ts: 404 outside the workspace, 403 outside the member's products.
const auth = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };

export const listFollowUpsOp = defineOperation({
  method: 'GET',
  path: '/api/follow-ups',
  ids: { query: { lead_id: 'lead' } },
  summary: 'Follow-up reminders, soonest due first (open by default)',
  tag,
  auth: 'user',
  query: FollowUpsQuery,
  responses: { 200: FollowUpPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) => {
    const now = new Date();
    const rows = await listFollowUps(
      em,
      actor,
      {
        state: query.state,
        kind: query.kind,
        dueOnly: query.due === 'true',
        leadId: query.lead_id,
        limit: query.limit,
        after: query.cursor,
      },
      now,
    );
    return keysetPage(
      rows,
      query.limit,
      (r) => r.due_at,
      (r) => toFollowUp(r, now),
    );
  },
});

export const pendingCountOp = defineOperation({
  method: 'GET',
  path: '/api/follow-ups/pending-count',
  summary: 'Open follow-ups already due, by kind',
  tag,
  auth: 'user',
  responses: { 200: PendingCountView },
  errors: { 400: ['invalid_user'], ...auth },
  handler: async ({ em, actor }) => pendingCount(em, actor),
});

export const completeReminderOp = defineOperation({
  method: 'POST',
  path: '/api/follow-ups/reminders/{id}/complete',
  ids: { path: { id: 'reminder' } },
  summary: 'Mark a follow-up done',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: FollowUpView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['already_resolved'],
  },
  handler: async ({ em, actor, params }) => toFollowUp(await completeReminder(em, actor, params.id)),
});

export const dismissLeadOp = defineOperation({
  method: 'POST',
  path: '/api/follow-ups/leads/{leadId}/dismiss',
  ids: { path: { leadId: 'lead' } },
  summary: 'Dismiss every open follow-up of the lead (idempotent: says how many it dismissed)',
  tag,
  auth: 'user',
  params: LeadParams,
  responses: { 200: DismissView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => dismissLead(em, actor, params.leadId),
});

export const listNotesOp = defineOperation({
  method: 'GET',
  path: '/api/follow-ups/leads/{leadId}/notes',
  ids: { path: { leadId: 'lead' } },
  summary: 'Notes about the lead, newest first',
  tag,
  auth: 'user',
  params: LeadParams,
  query: NotesQuery,
  responses: { 200: NotePage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) =>
    keysetPage(
      await listNotes(em, actor, params.leadId, { limit: query.limit, after: query.cursor }),
      query.limit,
      (n) => n.created_at,
      toNote,
    ),
});

export const addNoteOp = defineOperation({
  method: 'POST',
  path: '/api/follow-ups/leads/{leadId}/notes',
  ids: { path: { leadId: 'lead' } },
  summary: 'Write a note about the lead',
  tag,
  auth: 'user',
  params: LeadParams,
  body: NoteBody,
  responses: { 201: NoteView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) =>
    reply(201, toNote(await addNote(em, actor, params.leadId, body.body))),
});
