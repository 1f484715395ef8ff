import { z } from 'zod';
import { NOTIFICATION_CHANNELS } from '../../db/entities/OperatorNotificationPreference.js';
import type { IOperatorMemory } from '../../db/entities/OperatorMemory.js';
import { MAX_FACTS_PER_PUT, MAX_KEY, MAX_VALUE, type NotificationPreferences } from '../../domain/operator-memory.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, iso, text } from '../schemas.js';

export const MemoryParams = z.object({ memoryID: z.uuid() });

const Fact = z
  .object({
    app_id: z.uuid().nullable().optional().meta({ description: 'The product the fact is about; null or absent: all products' }),
    key: text({ min: 1, max: MAX_KEY, trim: true }).meta({ description: `Unique per product (or for all products) for the caller; trimmed, 1–${MAX_KEY} characters` }),
    value: text({ min: 1, max: MAX_VALUE, trim: true }),
  })
  .strict();
export const PutMemoryBody = z.union([Fact, z.array(Fact).min(1).max(MAX_FACTS_PER_PUT)]).meta({
  description: `One fact, or a list of 1–${MAX_FACTS_PER_PUT}; each is inserted or, for an existing key of the same scope, replaced`,
});

export const MemoryQuery = z.object({
  ...pageQuery,
  app_id: z.uuid().optional().meta({ description: "That product's facts and those for all products (what the Operator sees when working on it)" }),
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
export const PreferencesBody = z
  .object({
    task_finished: Channel.optional().meta({ description: 'How to hear that a task finished (completed, failed or canceled)' }),
    confirmation_pending: Channel.optional().meta({ description: 'How to hear that an action waits for your confirmation' }),
  })
  .strict();

export const PreferencesView = z.object({
  task_finished: Channel,
  confirmation_pending: Channel,
  updated_at: Timestamp.nullable().meta({ description: 'null while the defaults apply' }),
});

export const toPreferencesView = (p: NotificationPreferences): z.infer<typeof PreferencesView> => ({
  task_finished: p.taskFinished,
  confirmation_pending: p.confirmationPending,
  updated_at: iso(p.updatedAt),
});
