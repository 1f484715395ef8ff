import { z } from 'zod';
import { PLAN_IDS } from '../../domain/billing/plans.js';
import type { AnnouncementRow } from '../../domain/notifications/announcements.js';
import type { NotificationRow } from '../../domain/notifications/notifications.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, iso } from '../schemas.js';

export const NotificationsQuery = z
  .object({
    ...pageQuery,
    unread: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: '`true`: only the notifications the caller has not read' }),
  })
  .strict();

export const NotificationView = z.object({
  id: z.uuid(),
  kind: z.string().meta({
    description:
      'account.disconnected, reply.received, contact.unsubscribed, list_import.completed, list_import.failed, company_import.ready_for_review, company_import.completed, operator.confirmation_pending, draft_review_overdue, operator_task.completed, operator_task.failed',
  }),
  title: z.string(),
  body: z.string(),
  data: z.record(z.string(), z.unknown()).meta({
    description: 'Ids of what the notification is about (platform_account_id, conversation_id, list_import_id, …)',
  }),
  read: z.boolean(),
  read_at: Timestamp.nullable(),
  created_at: Timestamp,
});

export const toNotificationView = (n: NotificationRow): z.infer<typeof NotificationView> => ({
  id: n.id,
  kind: n.kind,
  title: n.title,
  body: n.body,
  data: n.data ?? {},
  read: n.read_at !== null,
  read_at: iso(n.read_at ? new Date(n.read_at) : null),
  created_at: new Date(n.created_at).toISOString(),
});

export const NotificationPage = pageSchema(NotificationView);
export const UnreadCountView = z.object({ unread: z.number().int().min(0) });
export const ReadAllBody = z
  .object({
    up_to_id: z.uuid().optional().meta({
      description:
        'Mark only notifications up to this one (inclusive): the newest the person has seen, so later arrivals stay unread. Default: all.',
    }),
  })
  .strict();
export const ReadAllView = z.object({
  marked: z.number().int().min(0).meta({ description: 'Notifications this call marked read (0 on a repeat)' }),
  unread: z.number().int().min(0),
});

export const AnnouncementsQuery = z.object({ ...pageQuery }).strict();

export const AnnouncementView = z.object({
  id: z.uuid(),
  title: z.string(),
  body: z.string(),
  cta: z
    .object({ label: z.string(), url: z.string() })
    .nullable()
    .meta({ description: 'The call to action, if any: follow the URL and record the click with cta-click' }),
  plans: z.array(z.enum(PLAN_IDS)).nullable().meta({ description: 'The plans it is for; null: every plan' }),
  starts_at: Timestamp,
  ends_at: Timestamp.nullable(),
  cta_clicked_at: Timestamp.nullable().meta({
    description: 'When the caller followed the call to action (null: not yet)',
  }),
});

export const toAnnouncementView = (a: AnnouncementRow): z.infer<typeof AnnouncementView> => ({
  id: a.id,
  title: a.title,
  body: a.body,
  cta: a.cta_label && a.cta_url ? { label: a.cta_label, url: a.cta_url } : null,
  plans: a.plans,
  starts_at: new Date(a.starts_at).toISOString(),
  ends_at: iso(a.ends_at ? new Date(a.ends_at) : null),
  cta_clicked_at: iso(a.cta_clicked_at ? new Date(a.cta_clicked_at) : null),
});

export const AnnouncementPage = pageSchema(AnnouncementView);
export const DismissView = z.object({
  id: z.uuid(),
  dismissed_at: Timestamp.meta({ description: 'The first dismissal (a repeat keeps it)' }),
  already_dismissed: z.boolean(),
});
export const CtaClickView = z.object({
  id: z.uuid(),
  recorded: z.boolean().meta({
    description:
      'true: this click was recorded; false: an earlier click of the caller already was, nothing new is recorded',
  }),
  clicked_at: Timestamp.meta({ description: 'The recorded (first) click' }),
  cta_url: z.string(),
});
