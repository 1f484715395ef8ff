// Notifications and announcements of the caller (docs/notifications.md). Both are per person in the
// workspace they act in (X-Acting-As): another member's notifications, or an announcement the
// caller cannot see, are 404.
import { clickCta, dismiss, listForUser } from '../../domain/notifications/announcements.js';
import { listNotifications, markAllRead, markRead, unreadCount } from '../../domain/notifications/notifications.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  AnnouncementPage,
  AnnouncementsQuery,
  CtaClickView,
  DismissView,
  NotificationPage,
  NotificationView,
  NotificationsQuery,
  ReadAllBody,
  ReadAllView,
  UnreadCountView,
  toAnnouncementView,
  toNotificationView,
} from './schemas.js';

const auth = { 401: ['unauthorized'] };

export const listNotificationsOp = defineOperation({
  method: 'GET',
  path: '/api/me/notifications',
  summary: 'The caller’s notifications in this workspace, newest first (optionally unread only)',
  tag: 'notifications',
  auth: 'user',
  query: NotificationsQuery,
  responses: { 200: NotificationPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(
      await listNotifications(em, actor, { ...toPageRequest(query), unread: query.unread === 'true' }),
      query.limit,
      toNotificationView,
    ),
});

export const unreadCountOp = defineOperation({
  method: 'GET',
  path: '/api/me/notifications/unread-count',
  summary: 'How many of the caller’s notifications in this workspace are unread',
  tag: 'notifications',
  auth: 'user',
  responses: { 200: UnreadCountView },
  errors: { 400: ['invalid_user'], ...auth },
  handler: async ({ em, actor }) => ({ unread: await unreadCount(em, actor) }),
});

export const readNotificationOp = defineOperation({
  method: 'POST',
  path: '/api/me/notifications/{id}/read',
  ids: { path: { id: { own: 'a notification of the caller' } } },
  summary: 'Mark one notification read (idempotent: the first read’s time stays); only the caller’s',
  tag: 'notifications',
  auth: 'user',
  params: IdParams,
  responses: { 200: NotificationView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toNotificationView(await markRead(em, actor, params.id)),
});

export const readAllNotificationsOp = defineOperation({
  method: 'POST',
  path: '/api/me/notifications/read-all',
  operationId: 'readAllMyNotifications',
  ids: { body: { up_to_id: { own: 'a notification of the caller (the newest to mark read)' } } },
  summary: 'Mark the caller’s unread notifications in this workspace read (all, or up to a given one); idempotent',
  tag: 'notifications',
  auth: 'user',
  body: ReadAllBody,
  responses: { 200: ReadAllView },
  errors: { 400: ['invalid_body', 'invalid_user'], ...auth, 403: ['demo_read_only'] },
  handler: async ({ em, actor, body }) => {
    const marked = await markAllRead(em, actor, body.up_to_id);
    return { marked, unread: await unreadCount(em, actor) };
  },
});

export const listAnnouncementsOp = defineOperation({
  method: 'GET',
  path: '/api/me/announcements',
  summary: 'Live announcements for the plan of this workspace that the caller has not dismissed, newest first',
  tag: 'announcements',
  auth: 'user',
  query: AnnouncementsQuery,
  responses: { 200: AnnouncementPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(await listForUser(em, actor, toPageRequest(query)), query.limit, toAnnouncementView),
});

export const dismissAnnouncementOp = defineOperation({
  method: 'POST',
  path: '/api/me/announcements/{id}/dismiss',
  ids: { path: { id: { own: 'an announcement as the caller sees it' } } },
  summary: 'Dismiss an announcement for the caller (idempotent)',
  tag: 'announcements',
  auth: 'user',
  params: IdParams,
  responses: { 200: DismissView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const d = await dismiss(em, actor, params.id);
    return { id: d.id, dismissed_at: new Date(d.dismissed_at).toISOString(), already_dismissed: d.already };
  },
});

export const ctaClickOp = defineOperation({
  method: 'POST',
  path: '/api/me/announcements/{id}/cta-click',
  operationId: 'clickMyAnnouncementCta',
  ids: { path: { id: { own: 'an announcement as the caller sees it' } } },
  summary:
    'Record that the caller followed the announcement’s call to action (once per person: a repeat records nothing and says so)',
  tag: 'announcements',
  auth: 'user',
  params: IdParams,
  responses: { 200: CtaClickView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    403: ['demo_read_only'],
    404: ['not_found'],
    409: ['no_call_to_action'],
  },
  handler: async ({ em, actor, params }) => {
    const c = await clickCta(em, actor, params.id);
    return { id: c.id, recorded: c.recorded, clicked_at: new Date(c.clicked_at).toISOString(), cta_url: c.cta_url };
  },
});
