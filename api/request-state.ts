// `ctx.state` of every request: a class with lazy members, so a request that never logs or touches
// the database allocates no child logger and forks no EntityManager (and the object keeps one
// stable shape instead of being patched with property descriptors per request).
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../lib/logger.js';
import type { Actor, AuthInfo } from '../domain/identity.js';
import type { ResolvedCredential } from '../domain/auth/auth.js';
import type { Operation } from './operation.js';

export class RequestState {
  requestId = '';
  operation?: Operation;
  auth?: AuthInfo;
  actor?: Actor;
  credential?: ResolvedCredential;
  credentialKey?: string;
  private forked?: EntityManager;
  private child?: Logger;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
  ) {}

  /** This request's EntityManager, forked on first use. */
  get em(): EntityManager {
    return (this.forked ??= this.orm.em.fork() as EntityManager);
  }

  /** A logger carrying the request id, built on first use. */
  get log(): Logger {
    return (this.child ??= this.logger.child({ request_id: this.requestId }));
  }
}
