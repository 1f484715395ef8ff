// Onboarding progress (docs/ideas-views-onboarding.md): derived from the workspace's rows, never stored.
import { z } from 'zod';
import { ONBOARDING_STEPS, onboardingProgress } from '../../domain/onboarding/onboarding.js';
import { defineOperation } from '../operation.js';
import { Timestamp, iso } from '../schemas.js';

export const OnboardingView = z.object({
  steps: z.array(
    z.object({
      step: z.enum(ONBOARDING_STEPS),
      label: z.string(),
      done: z.boolean(),
      done_at: Timestamp.nullable().meta({
        description: 'When the earliest row that completes the step was made (null: not done)',
      }),
    }),
  ),
  completed: z.number().int().min(0),
  total: z.number().int().min(1),
  percent: z.number().int().min(0).max(100),
  next_step: z.enum(ONBOARDING_STEPS).nullable(),
});

export const onboardingProgressOp = defineOperation({
  method: 'GET',
  path: '/api/onboarding/progress',
  summary:
    'The workspace’s onboarding steps (product, agent, sender account, list, campaign, first reply), each done or not and since when',
  tag: 'onboarding',
  auth: 'user',
  responses: { 200: OnboardingView },
  errors: { 400: ['invalid_user'], 401: ['unauthorized'] },
  handler: async ({ em, actor }) => {
    const p = await onboardingProgress(em, actor);
    return { ...p, steps: p.steps.map((s) => ({ ...s, done_at: iso(s.done_at) })) };
  },
});
