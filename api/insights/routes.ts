// Insights (docs/insights.md): recommendations from the `insights-refresh` workflow, applied once
// through the domain code of the equivalent call, dismissed or snoozed.
import { applyInsight, countInsights, listInsights, setInsightStatus } from '../../domain/insights/insights.js';
import { page } from '../../lib/pagination.js';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { CountView, InsightPage, InsightsQuery, InsightView, StatusBody, toInsight } from './schemas.js';

const tag = 'insights';
const auth = { 401: ['unauthorized'] };

export const listInsightsOp = defineOperation({
  method: 'GET',
  path: '/api/insights',
  ids: { query: { app_id: 'app' } },
  summary: 'Recommendations, newest first (open by default)',
  tag,
  auth: 'user',
  query: InsightsQuery,
  responses: { 200: InsightPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) => {
    const now = new Date();
    const rows = await listInsights(em, actor, {
      status: query.status,
      kind: query.kind,
      appId: query.app_id,
      limit: query.limit,
      before: query.cursor,
    });
    return page(rows, query.limit, (r) => toInsight(r, now));
  },
});

export const countInsightsOp = defineOperation({
  method: 'GET',
  path: '/api/insights/count',
  summary: 'Open recommendations, in total and by kind',
  tag,
  auth: 'user',
  responses: { 200: CountView },
  errors: { 400: ['invalid_user'], ...auth },
  handler: async ({ em, actor }) => countInsights(em, actor),
});

export const applyInsightOp = defineOperation({
  method: 'POST',
  path: '/api/insights/{id}/apply',
  idempotency: true, // performs the action (pause, reconnect, …); a retry would be 409 already_applied
  ids: { path: { id: 'insight' } },
  summary: 'Perform the recommended action once (a second apply is 409 already_applied)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: InsightView },
  errors: {
    400: ['invalid_id', 'invalid_user', 'invalid_limits'],
    ...auth,
    403: ['demo_read_only', 'not_assigned', 'subscription_required'],
    404: ['not_found'],
    409: ['already_applied', 'not_applicable', 'invalid_transition', 'already_connected'],
  },
  handler: async ({ em, actor, params, services }) =>
    toInsight(
      await applyInsight(em, actor, params.id, {
        jobs: services.jobs,
        connector: services.connector,
        encryptionKey: services.config.encryptionKey,
      }),
    ),
});

export const setInsightStatusOp = defineOperation({
  method: 'PATCH',
  path: '/api/insights/{id}/status',
  ids: { path: { id: 'insight' } },
  summary: 'Dismiss an insight (a refresh never brings it back), snooze it until a time, or open it again',
  tag,
  auth: 'user',
  params: IdParams,
  body: StatusBody,
  responses: { 200: InsightView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_until', 'invalid_user'],
    ...auth,
    403: ['demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition'],
  },
  handler: async ({ em, actor, params, body }) =>
    toInsight(
      await setInsightStatus(
        em,
        actor,
        params.id,
        body.status === 'snoozed' ? { status: 'snoozed', until: new Date(body.until) } : { status: body.status },
      ),
    ),
});
