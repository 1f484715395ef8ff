// Preview and promotion actions for the Operator: try a signal (read: it writes nothing) and
// promote one rejected profile to a discovered lead (change).
import { z } from 'zod';
import { assertWritable } from '../demo/demo.js';
import { SIGNAL_KINDS } from '../agents/agents.js';
import { PREVIEW_DEFAULT, PREVIEW_MAX, previewSignal } from '../agents/signal-preview.js';
import { promoteOne } from '../agents/promotion.js';
import { defineTool } from './registry.js';

export const agentPromotionTools = [
  defineTool({
    name: 'preview_signal',
    ids: { agent_id: 'agent', signal_id: { within: 'agent_id', child: 'signal' } },
    domain: 'agents',
    description:
      'Try one signal of a discovery agent (signal_id) or an unsaved one (signal: kind, keywords) against its enabled sources: sample candidates with their ICP score, verdict and reasons, and whether the workspace already has them. Writes nothing.',
    input: z
      .object({
        agent_id: z.uuid(),
        signal_id: z.uuid().optional(),
        signal: z
          .object({
            kind: z.enum(SIGNAL_KINDS),
            keywords: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
          })
          .strict()
          .optional(),
        limit: z.number().int().min(1).max(PREVIEW_MAX).optional(),
      })
      .strict()
      .refine(
        (v) => (v.signal_id === undefined) !== (v.signal === undefined),
        'give exactly one of signal_id or signal',
      ),
    risk: 'read',
    run: async ({ em, actor, providers }, input) => {
      const p = await previewSignal(em, actor, providers, input.agent_id, {
        signalId: input.signal_id,
        signal: input.signal,
        limit: input.limit ?? PREVIEW_DEFAULT,
      });
      return {
        signal: p.signal,
        candidates: p.candidates.map((c) => ({
          name: c.name,
          title: c.title,
          company: c.company,
          known: c.known,
          score: c.score,
          verdict: c.verdict,
          reasons: c.reasons,
        })),
      };
    },
  }),
  defineTool({
    name: 'promote_rejected_profile',
    ids: { agent_id: 'agent', raw_id: { within: 'agent_id', child: 'rejected_profile' } },
    domain: 'agents',
    description:
      'Promote one rejected profile of a discovery agent to a discovered lead (status new), keeping its score and reasons. Promoting it again returns the same lead.',
    input: z.object({ agent_id: z.uuid(), raw_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      assertWritable(actor);
      const { lead, created } = await promoteOne(em, actor, input.agent_id, input.raw_id);
      return { lead_id: lead.id, full_name: lead.fullName, status: lead.status, score: lead.score, created };
    },
  }),
];
