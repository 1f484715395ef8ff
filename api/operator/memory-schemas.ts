import { z } from 'zod';
import { NOTIFICATION_CHANNELS } from '../../db/entities/OperatorNotificationPreference.js';
import type { IOperatorMemory } from '../../db/entities/OperatorMemory.js';
import { MAX_FACTS_PER_PUT, MAX_KEY, MAX_VALUE, type NotificationPreferences } from '../../domain/operator/memory.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, iso, text } from '../schemas.js';

export const MemoryParams = z.object({ memoryID: z.uuid() });

const Fact = z
  .object({
    app_id: z
      .uuid()
      .nullable()
      .optional()
      .meta({ description: 'The product the fact is about; null or absent: all products' }),
    key: text({ min: 1, max: MAX_KEY, trim: true }).meta({
      description: `Unique per product (or for all products) for the caller; trimmed, 1–${MAX_KEY} characters`,
    }),
    value: text({ min: 1, max: MAX_VALUE, trim: true }),
  })
  .strict();
export const PutMemoryBody = z.union([Fact, z.array(Fact).min(1).max(MAX_FACTS_PER_PUT)]).meta({
  description: `One fact, or a list of 1–${MAX_FACTS_PER_PUT}; each is inserted or, for an existing key of the same scope, replaced`,
});

export const MemoryQuery = z.object({
  ...pageQuery,
  app_id: z.uuid().optional().meta({
    description: "That product's facts and those for all products (what the Operator sees when working on it)",
  }),
});

export const MemoryView = z.object({
  id: z.uuid(),
  app_id: z.uuid().nullable(),
  key: z.string(),
  value: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const MemoryPage = pageSchema(MemoryView);

export const toMemoryView = (m: IOperatorMemory): z.infer<typeof MemoryView> => ({
  id: m.id,
  app_id: m.app?.id ?? null,
  key: m.key,
  value: m.value,
  created_at: m.createdAt.toISOString(),
  updated_at: m.updatedAt.toISOString(),
});

const Channel = z.enum(NOTIFICATION_CHANNELS);
const CHANNEL_HELP = '`in_app`: listed under /api/me/notifications; `email`: listed and mailed; `none`: not notified';
const pref = (what: string) => Channel.optional().meta({ description: `${what}. ${CHANNEL_HELP}` });

export const PreferencesBody = z
  .object({
    task_finished: pref('How to hear that an Operator task you started completed or failed'),
    confirmation_pending: pref('How to hear that an Operator action waits for your confirmation'),
    account_disconnected: pref('How to hear that a sender account of the workspace was disconnected'),
    reply_received: pref('How to hear that a lead replied (one notification per conversation and inbound batch)'),
    import_finished: pref(
      'How to hear that a list import you started completed or failed, or a company import you started is ready for review or finished',
    ),
    review_overdue: pref(
      'How to hear that an AI-written message of a campaign you can access waits for review past its deadline',
    ),
  })
  .strict();

export const PreferencesView = z.object({
  task_finished: Channel,
  confirmation_pending: Channel,
  account_disconnected: Channel,
  reply_received: Channel,
  import_finished: Channel,
  review_overdue: Channel,
  updated_at: Timestamp.nullable().meta({ description: 'null while the defaults apply' }),
});

export const toPreferencesView = (p: NotificationPreferences): z.infer<typeof PreferencesView> => ({
  task_finished: p.taskFinished,
  confirmation_pending: p.confirmationPending,
  account_disconnected: p.accountDisconnected,
  reply_received: p.replyReceived,
  import_finished: p.importFinished,
  review_overdue: p.reviewOverdue,
  updated_at: iso(p.updatedAt),
});

/** The body's fields as the domain's change (absent fields keep their value). */
export const toPreferencesChange = (
  b: z.infer<typeof PreferencesBody>,
): Partial<Omit<NotificationPreferences, 'updatedAt'>> => ({
  taskFinished: b.task_finished,
  confirmationPending: b.confirmation_pending,
  accountDisconnected: b.account_disconnected,
  replyReceived: b.reply_received,
  importFinished: b.import_finished,
  reviewOverdue: b.review_overdue,
});
