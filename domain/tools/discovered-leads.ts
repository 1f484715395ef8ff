// Review of discovered leads for the Operator: list them, approve one into a list, reject one with a reason.
import { z } from 'zod';
import {
  DISCOVERED_LEAD_STATUSES,
  MAX_REASON,
  approveDiscoveredLead,
  listDiscoveredLeads,
  rejectDiscoveredLead,
} from '../discovered-leads/discovered-leads.js';
import { defineTool } from './registry.js';

export const discoveredLeadTools = [
  defineTool({
    name: 'list_discovered_leads',
    ids: { app_id: 'app', agent_id: 'agent' },
    domain: 'discovered-leads',
    description:
      'List discovered leads (newest first, up to 50), optionally of one product or agent, by status or signal, or matching a text in name, title or company.',
    input: z
      .object({
        app_id: z.uuid().optional(),
        agent_id: z.uuid().optional(),
        status: z.enum(DISCOVERED_LEAD_STATUSES).optional(),
        signal_key: z.string().max(100).optional(),
        q: z.string().max(200).optional(),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (await listDiscoveredLeads(em, actor, input, { limit: 50 })).slice(0, 50).map((r) => ({
        id: r.id,
        agent_id: r.agent_id,
        app_id: r.app_id,
        status: r.status,
        full_name: r.full_name,
        title: r.title,
        company: r.company,
        signal_key: r.signal_key,
        score: r.score,
      })),
  }),
  defineTool({
    name: 'approve_discovered_lead',
    ids: { discovered_lead_id: 'discovered_lead', list_id: 'list' },
    domain: 'discovered-leads',
    description:
      "Approve a discovered lead into a list of its product (default: its agent's list): creates or reuses the contact and adds it once.",
    input: z.object({ discovered_lead_id: z.uuid(), list_id: z.uuid().optional() }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      const a = await approveDiscoveredLead(em, actor, input.discovered_lead_id, input.list_id);
      return {
        id: a.id,
        result: a.result,
        list_id: a.listId ?? null,
        lead_id: a.leadId ?? null,
        contact_id: a.contactId ?? null,
        created: a.created ?? false,
      };
    },
  }),
  defineTool({
    name: 'reject_discovered_lead',
    ids: { discovered_lead_id: 'discovered_lead' },
    domain: 'discovered-leads',
    description: "Reject a discovered lead with a reason (counted in the agent's rejection breakdown).",
    input: z.object({ discovered_lead_id: z.uuid(), reason: z.string().trim().min(1).max(MAX_REASON) }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => ({
      id: input.discovered_lead_id,
      result: await rejectDiscoveredLead(em, actor, input.discovered_lead_id, input.reason),
    }),
  }),
];
