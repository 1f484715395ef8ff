// The names of the OpenAPI document's component schemas. Every exported view (`…View`, `…Page`) and
// request body (`…Body`) of the api/*/schemas modules is registered under its export name (`View`
// dropped: `CampaignView` → `Campaign`), so each resource is one named schema referenced everywhere
// and generated clients get one type per resource. A name exported by two modules for different
// schemas is qualified with its module's folder (`StatusBody` → `CampaignsStatusBody`).
import { z } from 'zod';
import {
  ConditionConfig,
  CreateStepInput,
  EmailConfig,
  InvitationConfig,
  MessageConfig,
  StepInput,
  WaitConfig,
} from '../domain/campaigns/steps.js';
import * as accounts from './accounts/schemas.js';
import * as accountsOAuth from './accounts/oauth-schemas.js';
import * as agents from './agents/schemas.js';
import * as analytics from './analytics/schemas.js';
import * as appsAi from './apps/ai-schemas.js';
import * as apps from './apps/schemas.js';
import * as specialists from './apps/specialist-schemas.js';
import * as auth from './auth/schemas.js';
import * as billing from './billing/schemas.js';
import * as booking from './booking/schemas.js';
import * as campaigns from './campaigns/schemas.js';
import * as cdmImports from './cdm-imports/schemas.js';
import * as contacts from './contacts/schemas.js';
import * as discoveredLeads from './discovered-leads/schemas.js';
import * as enrichment from './enrichment/schemas.js';
import * as enrollments from './enrollments/schemas.js';
import * as followUps from './follow-ups/schemas.js';
import * as ideas from './ideas/schemas.js';
import * as inbox from './inbox/schemas.js';
import * as insights from './insights/schemas.js';
import * as integrations from './integrations/schemas.js';
import * as listImports from './lists/import-schemas.js';
import * as lists from './lists/schemas.js';
import * as mcp from './mcp/schemas.js';
import * as meetings from './meetings/schemas.js';
import * as messageReview from './message-review/schemas.js';
import * as notifications from './notifications/schemas.js';
import * as operatorAttachments from './operator/attachment-schemas.js';
import * as operatorMemory from './operator/memory-schemas.js';
import * as operatorTasks from './operator/task-schemas.js';
import * as operatorThreads from './operator/thread-schemas.js';
import * as scheduledActions from './scheduled-actions/schemas.js';
import * as suppressions from './suppressions/schemas.js';
import * as tableViews from './table-views/schemas.js';
import * as team from './team/schemas.js';
import * as users from './users/schemas.js';
import * as webhooks from './webhooks/schemas.js';

/** Module → the prefix that qualifies its names when two modules export one name. */
const MODULES: [string, Record<string, unknown>][] = [
  ['Accounts', accounts],
  ['AccountsOAuth', accountsOAuth],
  ['Agents', agents],
  ['Analytics', analytics],
  ['AppsAi', appsAi],
  ['Apps', apps],
  ['Specialists', specialists],
  ['Auth', auth],
  ['Billing', billing],
  ['Booking', booking],
  ['Campaigns', campaigns],
  ['CdmImports', cdmImports],
  ['Contacts', contacts],
  ['DiscoveredLeads', discoveredLeads],
  ['Enrichment', enrichment],
  ['Enrollments', enrollments],
  ['FollowUps', followUps],
  ['Ideas', ideas],
  ['Inbox', inbox],
  ['Insights', insights],
  ['Integrations', integrations],
  ['ListImports', listImports],
  ['Lists', lists],
  ['Mcp', mcp],
  ['Meetings', meetings],
  ['MessageReview', messageReview],
  ['Notifications', notifications],
  ['OperatorAttachments', operatorAttachments],
  ['OperatorMemory', operatorMemory],
  ['OperatorTasks', operatorTasks],
  ['OperatorThreads', operatorThreads],
  ['ScheduledActions', scheduledActions],
  ['Suppressions', suppressions],
  ['TableViews', tableViews],
  ['Team', team],
  ['Users', users],
  ['Webhooks', webhooks],
];

const NAMED = /(View|Page|Body)$/;

/** Union members get names too: a generator then makes one class per step type, not `…Type0Config`. */
const STEP_TYPES = ['Email', 'Invitation', 'Message', 'Wait', 'Condition'];
const byHand = (): [z.ZodType, string][] => [
  ...StepInput.options.map((o, i) => [o, `${STEP_TYPES[i]}Step`] as [z.ZodType, string]),
  ...CreateStepInput.options.map((o, i) => [o, `New${STEP_TYPES[i]}Step`] as [z.ZodType, string]),
  [EmailConfig, 'EmailStepConfig'],
  [InvitationConfig, 'InvitationStepConfig'],
  [MessageConfig, 'MessageStepConfig'],
  [WaitConfig, 'WaitStepConfig'],
  ...WaitConfig.options.map((o, i) => [o, ['WaitMinutes', 'WaitHours', 'WaitBusinessDays'][i]] as [z.ZodType, string]),
  [ConditionConfig, 'ConditionStepConfig'],
];

/**
 * Names a generator's target language already uses (Python's `typing.List`, TypeScript's `Error`,
 * Java's `Object`…): a generated model of that name shadows the built-in and the package breaks. A
 * schema whose rule-given name is one of them takes the name on the right.
 */
export const BUILT_IN_NAMES: Record<string, string | undefined> = {
  List: 'LeadList',
  Error: undefined,
  Dict: undefined,
  Set: undefined,
  Map: undefined,
  Type: undefined,
  Any: undefined,
  Optional: undefined,
  Union: undefined,
  Tuple: undefined,
  Object: undefined,
  String: undefined,
  Number: undefined,
  Boolean: undefined,
  Date: undefined,
  Record: undefined,
  Promise: undefined,
  Array: undefined,
  Function: undefined,
  Symbol: undefined,
  Response: undefined,
  Request: undefined,
  Configuration: undefined,
  Exception: undefined,
  Class: undefined,
  Integer: undefined,
};

/** Registers every component name once per process (zod's registry refuses an id twice). */
let done = false;
export function nameComponents(): void {
  if (done) return;
  done = true;
  for (const [schema, id] of byHand()) z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
  const byName = new Map<string, { prefix: string; schema: z.ZodType }[]>();
  for (const [prefix, mod] of MODULES)
    for (const [name, value] of Object.entries(mod)) {
      if (!NAMED.test(name) || !(value instanceof z.ZodType)) continue;
      const entry = byName.get(name) ?? byName.set(name, []).get(name)!;
      if (!entry.some((e) => e.schema === value)) entry.push({ prefix, schema: value });
    }
  for (const [name, entries] of byName) {
    const base = name.endsWith('View') ? name.slice(0, -'View'.length) : name;
    for (const { prefix, schema } of entries) {
      const ruled = entries.length > 1 ? `${prefix}${base}` : base;
      const id = ruled in BUILT_IN_NAMES ? BUILT_IN_NAMES[ruled] : ruled;
      if (!id)
        throw new Error(`schema ${name} would be named ${ruled}, a language built-in: add its name to BUILT_IN_NAMES`);
      const meta = z.globalRegistry.get(schema);
      if (meta?.id) continue; // named by hand (`.meta({ id })`)
      z.globalRegistry.add(schema, { ...meta, id });
    }
  }
}
