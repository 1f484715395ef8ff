import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';

// Personal access token: only the SHA-256 of the secret is kept; `prefix` helps users tell them apart.
export const ApiToken = defineEntity({
  name: 'ApiToken',
  tableName: 'api_tokens',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    user: p.manyToOne(User).ref().deleteRule('cascade').index(),
    name: p.string().length(100),
    tokenHash: p.string().length(64).unique().hidden(),
    prefix: p.string().length(16),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IApiToken = InferEntity<typeof ApiToken>;
