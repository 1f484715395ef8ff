// Notifications and onboarding for the Operator (docs/notifications.md): read the caller's
// notifications, mark some or all read (a change: the person confirms), see onboarding progress.
import { z } from 'zod';
import { listNotifications, markAllRead, markSomeRead, unreadCount } from '../notifications/notifications.js';
import { onboardingProgress } from '../onboarding/onboarding.js';
import { defineTool } from './registry.js';

export const notificationTools = [
  defineTool({
    name: 'list_notifications',
    domain: 'notifications',
    description:
      'List the user’s notifications in this workspace, newest first (disconnected accounts, replies, finished imports, confirmations and reviews waiting, finished tasks), optionally unread only, with the unread count.',
    input: z
      .object({ unread_only: z.boolean().optional(), limit: z.number().int().min(1).max(50).default(20) })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, i) => {
      const rows = await listNotifications(em, actor, { limit: i.limit, unread: i.unread_only });
      return {
        unread: await unreadCount(em, actor),
        notifications: rows.slice(0, i.limit).map((n) => ({
          id: n.id,
          kind: n.kind,
          title: n.title,
          body: n.body.slice(0, 1000),
          data: n.data,
          read: n.read_at !== null,
          created_at: new Date(n.created_at).toISOString(),
        })),
      };
    },
  }),
  defineTool({
    name: 'mark_notifications_read',
    ids: { notification_ids: { own: 'notifications of the caller' } },
    domain: 'notifications',
    description:
      'Mark the user’s notifications read: the given ids (notification_ids), or all of them in this workspace (all: true).',
    input: z
      .object({ notification_ids: z.array(z.uuid()).min(1).max(200).optional(), all: z.boolean().optional() })
      .strict()
      .refine((i) => (i.all === true) !== (i.notification_ids !== undefined), {
        message: 'give notification_ids, or all: true',
      }),
    risk: 'change',
    run: async ({ em, actor }, i) => {
      const marked = i.all ? await markAllRead(em, actor) : await markSomeRead(em, actor, i.notification_ids!);
      return { marked, unread: await unreadCount(em, actor) };
    },
  }),
  defineTool({
    name: 'get_onboarding_progress',
    domain: 'notifications',
    description:
      'The workspace’s onboarding checklist: product created, discovery agent created, sender account connected, list with leads, campaign activated, first reply — each done or not and since when, the percent done and the next step.',
    input: z.object({}).strict(),
    risk: 'read',
    run: async ({ em, actor }) => {
      const p = await onboardingProgress(em, actor);
      return {
        ...p,
        steps: p.steps.map((s) => ({
          step: s.step,
          label: s.label,
          done: s.done,
          done_at: s.done_at?.toISOString() ?? null,
        })),
      };
    },
  }),
];
