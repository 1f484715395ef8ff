// AI assistance for products: suggested profiles from text or a web page, an ICP proposal from the
// stored profile. Nothing is stored (the caller PUTs what it accepts); each model call is a
// specialist run. Demo workspaces get the local model's answer and no record (domain/ai/calls.ts).
import { analyzeText, analyzeUrl, generateIcp } from '../../domain/apps/ai.js';
import { defineOperation } from '../operation.js';
import { assertDocumentedUrl } from '../webhooks/schemas.js';
import {
  AnalyzeTextBody,
  AnalyzeUrlBody,
  IcpSuggestionView,
  PageSuggestionView,
  ProductSuggestionView,
} from './ai-schemas.js';
import { AppIdParams } from './schemas.js';

const tag = 'apps';
const auth = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };

export const analyzeTextOp = defineOperation({
  method: 'POST',
  path: '/api/apps/analyze-text',
  ids: { body: { app_id: 'app' } },
  summary: 'Suggest a product profile and ICP from a description (nothing is stored)',
  tag,
  auth: 'user',
  demo: 'simulate',
  body: AnalyzeTextBody,
  responses: { 200: ProductSuggestionView },
  errors: { 400: ['invalid_body', 'invalid_user'], ...auth, 500: ['ai_error'] },
  handler: ({ em, actor, services, body }) => analyzeText(em, actor, services.llm, body),
});

export const analyzeUrlOp = defineOperation({
  method: 'POST',
  path: '/api/apps/analyze-url',
  ids: { body: { app_id: 'app' } },
  summary: 'Suggest a product profile and ICP from a web page, fetched through the guarded client (nothing is stored)',
  tag,
  auth: 'user',
  demo: 'simulate',
  body: AnalyzeUrlBody,
  responses: { 200: PageSuggestionView },
  errors: {
    400: ['invalid_body', 'invalid_url', 'blocked_destination', 'invalid_user'],
    ...auth,
    422: ['no_text'],
    500: ['ai_error'],
    502: ['fetch_failed'],
  },
  handler: ({ em, actor, services, body }) => {
    assertDocumentedUrl(body.url, services.config.outboundAllowHosts);
    return analyzeUrl(em, actor, services.llm, { allowHosts: services.config.outboundAllowHosts }, body);
  },
});

export const generateIcpOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{id}/generate-icp',
  ids: { path: { id: 'app' } },
  summary: 'Propose an ideal customer profile from the product’s stored profile (nothing is stored)',
  tag,
  auth: 'user',
  demo: 'simulate',
  params: AppIdParams,
  responses: { 200: IcpSuggestionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 422: ['no_text'], 500: ['ai_error'] },
  handler: ({ em, actor, services, params }) => generateIcp(em, actor, services.llm, params.id),
});
