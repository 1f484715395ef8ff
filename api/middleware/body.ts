import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';

/** JSON (and form) bodies only, with a size limit; multipart is parsed by the routes that take files. */
export const bodyParser = (limitBytes: number): Middleware =>
  koaBody({
    json: true,
    jsonStrict: true,
    urlencoded: true,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    formLimit: limitBytes,
  }) as unknown as Middleware;
