// The Operator's tool registry (DESIGN.md): every domain declares its actions once — name,
// description, zod input schema, risk and a handler that calls `domain`. The Operator, `GET
// /api/agent/capabilities` and the MCP endpoint serve this one table; anything but `read` needs a
// confirmation (Operator) or an approval (MCP) before it runs.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { loadConfig } from '../../lib/config.js';
import { createModelAdapter, type ModelAdapter } from '../../lib/llm/index.js';
import type { PreviewProviders } from '../signal-preview.js';

export const RISKS = ['read', 'change', 'send', 'spend', 'delete'] as const;
export type Risk = (typeof RISKS)[number];

/** What a tool runs with: the caller's identity and a request-scoped EntityManager. */
export interface ToolContext {
  em: EntityManager;
  actor: Actor;
  jobs: Jobs;
  /** The model AI tools use; absent means the configured one (createModelAdapter(config.llm)). */
  llm?: ModelAdapter;
  /** The model and sources, for tools that search or qualify (the API's services carry them). */
  providers?: PreviewProviders;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  /** snake_case, unique across domains. */
  name: string;
  /** The domain that owns it (agents, lists, campaigns …). */
  domain: string;
  /** What it does, for the model and for people approving it. */
  description: string;
  input: S;
  risk: Risk;
  run(ctx: ToolContext, input: z.output<S>): Promise<unknown>;
}

export const defineTool = <S extends z.ZodType>(tool: Tool<S>): Tool<S> => tool;

/** Validates the input against the tool's schema (throwing zod's error), then runs it. */
export async function runTool(tool: Tool, ctx: ToolContext, input: unknown): Promise<unknown> {
  return tool.run(ctx, tool.input.parse(input));
}

/** Risk that needs a person's yes before the tool runs. */
export const needsConfirmation = (tool: Pick<Tool, 'risk'>): boolean => tool.risk !== 'read';

let configured: ModelAdapter | undefined;
/** The model a tool uses: the context's, else the configured one (created once). */
export const toolModel = (ctx: ToolContext): ModelAdapter => ctx.llm ?? (configured ??= createModelAdapter(loadConfig().llm));
