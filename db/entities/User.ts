import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    // Stored lower-cased; uniqueness is on this column.
    email: p.string().length(320).unique(),
    name: p.string().length(200).nullable(),
    passwordHash: p.text().nullable().hidden(),
    timezone: p.string().length(64).nullable(),
    locale: p.string().length(16).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IUser = InferEntity<typeof User>;
