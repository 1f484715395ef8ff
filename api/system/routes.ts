// Probes and documentation, outside /api: not rate limited and public.
import { z } from 'zod';
import { defineOperation, reply } from '../operation.js';
import { checkReadiness } from '../readiness.js';
import { ErrorBody } from '../schemas.js';
import { metricsAccess, refreshDatabaseGauges, registry } from '../../lib/metrics.js';
import { unauthorized } from '../../domain/errors.js';

const tag = 'system';

export const healthz = defineOperation({
  method: 'GET',
  path: '/healthz',
  operationId: 'getHealth',
  summary: 'Liveness: the process is up',
  tag,
  auth: 'public',
  rateLimit: 'none',
  responses: { 200: z.object({ status: z.literal('ok') }) },
  handler: () => ({ status: 'ok' as const }),
});

const Checks = z.record(z.string(), z.object({ ok: z.boolean(), detail: z.string().optional() }));

export const readyz = defineOperation({
  method: 'GET',
  path: '/readyz',
  operationId: 'getReadiness',
  summary: 'Readiness: PostgreSQL, Redis and Temporal reachable, and a worker polling the task queue',
  tag,
  auth: 'public',
  rateLimit: 'none',
  responses: { 200: z.object({ status: z.literal('ready'), checks: Checks }), 503: ErrorBody },
  handler: async ({ services, ctx }) => {
    const checks = await checkReadiness(services);
    if (Object.values(checks).every((c) => c.ok)) return { status: 'ready' as const, checks };
    return reply(503, {
      error: {
        code: 'not_ready',
        message: 'a dependency is unavailable',
        details: checks,
        request_id: ctx.state.requestId,
      },
    });
  },
});

export const metrics = defineOperation({
  method: 'GET',
  path: '/metrics',
  summary: 'Prometheus metrics (process, request latency by operation, outbox lag and enrollments by status)',
  tag,
  auth: 'public',
  rateLimit: 'none',
  produces: 'text/plain',
  responses: { 200: z.string() },
  errors: { 401: ['unauthorized'] },
  handler: async ({ ctx, services, em }) => {
    // METRICS_TOKEN when set; without one, open in development and tests, closed in production (docs/metrics.md).
    const denied = metricsAccess(services.config, ctx.get('authorization'));
    if (denied) throw unauthorized(denied);
    // The database gauges are best effort: a slow or absent database must not cost the other metrics.
    await em
      .transactional(async (tx) => {
        await tx.execute('set local statement_timeout = 2000');
        await refreshDatabaseGauges((sql) => tx.execute(sql));
      })
      .catch((err: unknown) => ctx.state.log?.warn({ err: String(err) }, 'metrics: database gauges not read'));
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  },
});
