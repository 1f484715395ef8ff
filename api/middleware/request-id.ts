import type { Middleware } from 'koa';
import { uuidv7 } from '../../lib/ids.js';
import { API_VERSION, API_VERSION_HEADER } from '../api-version.js';
import { RequestState } from '../request-state.js';
import type { Services } from '../services.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The first middleware: installs the request's state, takes the caller's X-Request-Id when it is
 * safe to echo (else mints one) and always echoes it back, with the API's version (api/api-version.ts).
 */
export const requestId =
  (services: Pick<Services, 'orm' | 'logger'>): Middleware =>
  async (ctx, next) => {
    const state = new RequestState(services.orm, services.logger);
    const incoming = ctx.get('x-request-id');
    state.requestId = incoming && SAFE_ID.test(incoming) ? incoming : uuidv7();
    ctx.state = state;
    ctx.set('X-Request-Id', state.requestId);
    ctx.set(API_VERSION_HEADER, API_VERSION);
    await next();
  };
