// The inbox and follow-ups for the Operator (docs/inbox.md): read conversations, draft a reply
// (spends credits), send one (risky: it reaches the lead), list follow-ups.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  conversationMessages,
  draftAiReply,
  listConversations,
  queueReply,
  requireConversation,
} from '../inbox/inbox.js';
import { listFollowUps } from '../follow-ups/follow-ups.js';
import { defineTool, toolModel } from './registry.js';

const summary = (c: Awaited<ReturnType<typeof listConversations>>[number]) => ({
  id: c.id,
  channel: c.channel,
  counterpart: c.counterpart_name ?? c.counterpart,
  lead_id: c.lead_id,
  campaign_id: c.campaign_id,
  last_message_at: new Date(c.last_message_at).toISOString(),
  last_message: c.last_message_preview,
  last_direction: c.last_direction,
  unread: c.unread_count,
});

export const inboxTools = [
  defineTool({
    name: 'list_inbox_conversations',
    ids: { lead_id: 'lead', campaign_id: 'campaign' },
    domain: 'inbox',
    description:
      'List inbox conversations (newest activity first), optionally only unread ones, one lead’s, one campaign’s, or matching a text.',
    input: z
      .object({
        unread: z.boolean().optional(),
        lead_id: z.uuid().optional(),
        campaign_id: z.uuid().optional(),
        q: z.string().min(1).max(200).optional(),
        limit: z.number().int().min(1).max(50).default(20),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      (
        await listConversations(em, actor, {
          unread: i.unread,
          leadId: i.lead_id,
          campaignId: i.campaign_id,
          q: i.q,
          limit: i.limit,
        })
      )
        .slice(0, i.limit)
        .map(summary),
  }),
  defineTool({
    name: 'read_inbox_conversation',
    ids: { conversation_id: 'conversation' },
    domain: 'inbox',
    description: 'Read one inbox conversation: who it is with and its last 30 messages, oldest first.',
    input: z.object({ conversation_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, i) => {
      const c = await requireConversation(em, actor, i.conversation_id);
      const messages = await conversationMessages(em, c, 30);
      return {
        ...summary(c),
        messages: messages.map((m) => ({
          direction: m.direction,
          kind: m.kind,
          state: m.state,
          sent_at: new Date(m.sent_at).toISOString(),
          body: m.body.slice(0, 2000),
        })),
        ai_reply: c.ai_reply?.body ?? null,
      };
    },
  }),
  defineTool({
    name: 'draft_inbox_reply',
    ids: { conversation_id: 'conversation' },
    domain: 'inbox',
    description:
      'Draft a reply to the last message of an inbox conversation with the model (kept on the conversation, not sent). Costs one draft’s credits.',
    input: z.object({ conversation_id: z.uuid(), instructions: z.string().min(1).max(1000).optional() }).strict(),
    risk: 'spend',
    run: async (ctx, i) => {
      const d = await draftAiReply(ctx.em, toolModel(ctx), ctx.actor, i.conversation_id, {
        instructions: i.instructions,
        requestId: randomUUID(),
      });
      return { body: d.body, subject: d.subject, credits: d.credits };
    },
  }),
  defineTool({
    name: 'send_inbox_reply',
    ids: { conversation_id: 'conversation' },
    domain: 'inbox',
    description:
      'Send a reply in an inbox conversation through its account (queued until the account’s sending limits allow it). It reaches the lead.',
    input: z
      .object({
        conversation_id: z.uuid(),
        body: z.string().min(1).max(20_000),
        subject: z.string().max(400).optional(),
      })
      .strict(),
    risk: 'send',
    run: async ({ em, actor, jobs }, i) => {
      const m = await queueReply(em, jobs, actor, i.conversation_id, { body: i.body, subject: i.subject });
      return { message_id: m.id, state: m.state };
    },
  }),
  defineTool({
    name: 'list_follow_ups',
    ids: { lead_id: 'lead' },
    domain: 'follow-ups',
    description:
      'List open follow-ups, soonest due first: leads who replied and wait for an answer, meetings that need an outcome.',
    input: z
      .object({
        due_only: z.boolean().default(false),
        lead_id: z.uuid().optional(),
        limit: z.number().int().min(1).max(50).default(20),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      (await listFollowUps(em, actor, { state: 'open', dueOnly: i.due_only, leadId: i.lead_id, limit: i.limit }))
        .slice(0, i.limit)
        .map((r) => ({
          id: r.id,
          kind: r.kind,
          lead_id: r.lead_id,
          lead: r.full_name ?? ([r.first_name, r.last_name].filter(Boolean).join(' ') || r.email),
          due_at: new Date(r.due_at).toISOString(),
          summary: r.summary,
          conversation_id: r.conversation_id,
          meeting_id: r.meeting_id,
        })),
  }),
];
