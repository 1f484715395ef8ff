// The tasks the product asks of a model: their input and answer shapes, the instructions a remote
// model gets, and typed helpers. The helpers only name the task and schema; every call still goes
// through ModelAdapter.structured, so the local and remote models stay interchangeable.
// Answer schemas avoid optional fields: OpenAI's strict structured output requires every property.
import { z } from 'zod';
import type { ModelAdapter, StructuredResult } from './types.js';

const strings = z.array(z.string());

/** Structured ICP filters. Sizes are employee ranges: 1-10, 11-50, 51-200, 201-500, 501-1000, 1001-5000, 5001-10000, 10001+. */
export const IcpFilters = z.object({
  titles: strings,
  seniorities: strings,
  industries: strings,
  countries: strings,
  company_sizes: strings,
  keywords: strings,
});
export type IcpFilters = z.infer<typeof IcpFilters>;

/** An ICP as qualification reads it: any subset of the filters, a description, exclusions. */
export interface IcpInput extends Partial<IcpFilters> {
  description?: string | null;
  exclude_keywords?: string[];
}

export interface Candidate {
  name?: string | null;
  title?: string | null;
  seniority?: string | null;
  company?: string | null;
  industry?: string | null;
  country?: string | null;
  /** Employees: a number or a range such as "51-200". */
  company_size?: number | string | null;
  headline?: string | null;
  /** Post or comment text that surfaced the candidate. */
  text?: string | null;
}

export interface QualifyInput {
  icp: IcpInput;
  candidate: Candidate;
  /** Score at or above which the verdict is `qualified` (default 60). */
  threshold?: number;
}

export const KeywordsResult = z.object({ keywords: strings });
export type KeywordsResult = z.infer<typeof KeywordsResult>;

export const QualificationReason = z.object({ field: z.string(), matched: z.boolean(), detail: z.string() });
export const Qualification = z.object({
  score: z.number().int().min(0).max(100),
  verdict: z.enum(['qualified', 'rejected']),
  reasons: z.array(QualificationReason),
});
export type Qualification = z.infer<typeof Qualification>;

export const IcpProposal = z.object({ description: z.string(), filters: IcpFilters });
export type IcpProposal = z.infer<typeof IcpProposal>;

export const ProductProfile = z.object({
  name: z.string(),
  description: z.string(),
  value_proposition: z.string(),
  icp_guess: z.string(),
});
export type ProductProfile = z.infer<typeof ProductProfile>;

export const QueriesResult = z.object({ queries: strings });
export type QueriesResult = z.infer<typeof QueriesResult>;

/** One outreach message (docs/message-review.md): `subject` is null except for email. */
export const WrittenMessage = z.object({ subject: z.string().nullable(), body: z.string() });
export type WrittenMessage = z.infer<typeof WrittenMessage>;

/** What the message task is given: no secrets, only what the message may use. */
export interface MessageInput {
  channel: 'email' | 'invitation' | 'message';
  /** Hard limit of the body in characters (the network invitation note: 300). */
  maxLength: number;
  product: { name: string; description: string | null; value_proposition: string | null };
  lead: Record<string, string | null>;
  sender_name: string | null;
  /** What the step is for, in the user's words (the step's template or intent). */
  intent: string | null;
  /** Messages the user wrote or accepted for this step or campaign: follow their tone and length. */
  examples: { subject: string | null; body: string }[];
  /** A revision: the previous text and what to change. */
  revise?: { previous: string; instructions: string };
  /** A different draft for the same lead (examples, retries): varies the wording deterministically. */
  variant?: number;
}

/** What the inbox reply task is given (docs/inbox.md "AI-drafted replies"): the thread and who is in it. */
export interface ReplyInput {
  channel: 'email' | 'message';
  maxLength: number;
  sender_name: string | null;
  lead: Record<string, string | null>;
  /** The conversation's last messages, oldest first: `in` from the lead, `out` from the sender. */
  history: { direction: 'in' | 'out'; body: string; sent_at: string }[];
  /** What the person wants the reply to do, in their words. */
  instructions: string | null;
}

/** Instructions for a remote model when the caller gives none. */
export const TASK_INSTRUCTIONS: Record<string, string> = {
  keywords:
    'Extract the most salient search keywords and short phrases (1-3 words, lowercase) from the product or ideal-customer text. Most important first.',
  qualify:
    'Score how well the candidate fits the ideal customer profile from 0 to 100. Give one reason per profile criterion, naming the candidate field and whether it matched. Verdict "qualified" when the score reaches the threshold (default 60).',
  icp: 'Propose an ideal customer profile for the product: a one-paragraph description and structured filters (job titles, seniorities, industries, countries, company size ranges, keywords).',
  product_profile:
    'Describe the product from the text: its name, a short description, its value proposition and a guess at its ideal customer.',
  queries:
    'Write search queries for the forum that would find posts by people who need the product, from the keywords given.',
  message:
    'Write one short, personal outreach message from the sender to the lead about the product, following the intent and the tone of the examples. Use only facts given. No placeholders or template variables. Stay under maxLength characters. subject only for email, else null. When revise is given, rewrite the previous text following the instructions.',
  reply:
    'Write the sender\'s reply to the last message the lead sent in this conversation: answer what they asked, briefly and politely, following the instructions when given. Use only facts given; no placeholders. Stay under maxLength characters. subject only for email (a "Re:" of the thread), else null.',
  chat: 'You are the Operator of a lead-discovery and outreach workspace. Answer briefly; call a tool when the user asks for an action one of them performs.',
};

type Opts = { signal?: AbortSignal; system?: string };

export const generateKeywords = (
  llm: ModelAdapter,
  input: { text: string; max?: number },
  opts: Opts = {},
): Promise<StructuredResult<KeywordsResult>> =>
  llm.structured({ task: 'keywords', input, schema: KeywordsResult, ...opts });

export const qualifyCandidate = (
  llm: ModelAdapter,
  input: QualifyInput,
  opts: Opts = {},
): Promise<StructuredResult<Qualification>> =>
  llm.structured({ task: 'qualify', input, schema: Qualification, ...opts });

export const proposeIcp = (
  llm: ModelAdapter,
  input: { text: string },
  opts: Opts = {},
): Promise<StructuredResult<IcpProposal>> => llm.structured({ task: 'icp', input, schema: IcpProposal, ...opts });

export const analyzeProduct = (
  llm: ModelAdapter,
  input: { text: string; name?: string },
  opts: Opts = {},
): Promise<StructuredResult<ProductProfile>> =>
  llm.structured({ task: 'product_profile', input, schema: ProductProfile, ...opts });

export const generateQueries = (
  llm: ModelAdapter,
  input: { keywords: string[]; forum?: string; max?: number },
  opts: Opts = {},
): Promise<StructuredResult<QueriesResult>> =>
  llm.structured({ task: 'queries', input, schema: QueriesResult, ...opts });

export const writeReply = (
  llm: ModelAdapter,
  input: ReplyInput,
  opts: Opts = {},
): Promise<StructuredResult<WrittenMessage>> =>
  llm.structured({ task: 'reply', input, schema: WrittenMessage, ...opts });

export const writeMessage = (
  llm: ModelAdapter,
  input: MessageInput,
  opts: Opts = {},
): Promise<StructuredResult<WrittenMessage>> =>
  llm.structured({ task: 'message', input, schema: WrittenMessage, ...opts });
