import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';

// A login session. Access JWTs carry its id (`sid`) and stop working once it is revoked or expired.
export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    user: p.manyToOne(User).ref().deleteRule('cascade').index(),
    userAgent: p.string().length(400).nullable(),
    ip: p.string().length(64).nullable(),
    expiresAt: p.datetime().index(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().onCreate(() => new Date()),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ISession = InferEntity<typeof Session>;
