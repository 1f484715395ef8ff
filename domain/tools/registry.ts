// The Operator's tool registry (DESIGN.md): every domain declares its actions once — name,
// description, zod input schema, risk and a handler that calls `domain`. The Operator, `GET
// /api/agent/capabilities` and the MCP endpoint serve this one table; anything but `read` needs a
// confirmation (Operator) or an approval (MCP) before it runs.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import type { Config } from '../../lib/config.js';
import type { ModelAdapter } from '../../lib/llm/index.js';
import type { Providers } from '../../lib/providers.js';
import { authorizeRequest, idFields, type IdRule } from '../access.js';

export const RISKS = ['read', 'change', 'send', 'spend', 'delete'] as const;
export type Risk = (typeof RISKS)[number];

/** What a tool runs with: the caller's identity and a request-scoped EntityManager. */
export interface ToolContext {
  em: EntityManager;
  actor: Actor;
  jobs: Jobs;
  /** The process's settings (public base URL, encryption key, DKIM selectors …). */
  config: Config;
  /**
   * The process's providers (lib/providers.ts): the model, the sources, the partner CRM, DNS … —
   * the API's services or the worker's bundle; a test gives its own.
   */
  providers: Providers;
  /**
   * The product the call is made for (an Operator thread's or task's): a tool that requires `app_id`
   * takes this one when the input leaves it out. Absent (MCP): `app_id` stays required.
   */
  appId?: string;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  /** snake_case, unique across domains. */
  name: string;
  /** The domain that owns it (agents, lists, campaigns …). */
  domain: string;
  /** What it does, for the model and for people approving it. */
  description: string;
  input: S;
  /**
   * What each id field of the input names (domain/access.ts `IdRule`); every field that reads as an
   * id must be declared (`defineTool` throws otherwise). `runTool` checks them before the tool runs.
   */
  ids?: Record<string, IdRule>;
  risk: Risk;
  run(ctx: ToolContext, input: z.output<S>): Promise<unknown>;
}

/** The input fields that carry ids (domain/access.ts `idFields`) and that the tool's `ids` does not declare. */
export const undeclaredToolIds = (tool: Pick<Tool, 'input' | 'ids'>): string[] =>
  idFields(tool.input).filter((k) => !tool.ids?.[k]);

export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  const missing = undeclaredToolIds(tool);
  if (missing.length)
    throw new Error(
      `tool ${tool.name}: declare what these ids name in \`ids\` (domain/access.ts IdRule): ${missing.join(', ')}`,
    );
  return tool;
}

/** Whether the tool's input has an `app_id` it cannot do without (tools where it is optional read "all products" from its absence). */
export function requiresAppId(tool: Pick<Tool, 'input'>): boolean {
  const shape = (tool.input as { shape?: Record<string, z.ZodType> }).shape;
  return !!shape?.app_id && !shape.app_id.safeParse(undefined).success;
}

/** The input with `app_id` set to `appId` when the tool requires one and the input has none (null or absent). */
export function withDefaultApp(tool: Pick<Tool, 'input'>, input: unknown, appId: string | undefined): unknown {
  if (!appId || !requiresAppId(tool)) return input;
  if (input === undefined || input === null) return { app_id: appId };
  if (typeof input !== 'object' || Array.isArray(input)) return input;
  const args = input as Record<string, unknown>;
  return args.app_id === undefined || args.app_id === null ? { ...args, app_id: appId } : input;
}

/**
 * Validates the input against the tool's schema (throwing zod's error), checks its declared ids (404 /
 * 403 `not_assigned`, as for REST), then runs it; `app_id` defaults to the context's product.
 */
export async function runTool(tool: Tool, ctx: ToolContext, input: unknown): Promise<unknown> {
  const args = tool.input.parse(withDefaultApp(tool, input, ctx.appId));
  if (tool.ids) await authorizeRequest(ctx.em, ctx.actor, { body: tool.ids }, 'body', args as Record<string, unknown>);
  return tool.run(ctx, args);
}

/** Risk that needs a person's yes before the tool runs. */
export const needsConfirmation = (tool: Pick<Tool, 'risk'>): boolean => tool.risk !== 'read';

/** The model a tool uses: the context's. */
export const toolModel = (ctx: ToolContext): ModelAdapter => ctx.providers.llm;

// The catalogue is declared in index.ts (every slice's tool set) and handed here as index.ts loads.
// Code that plans or runs a tool by name (Operator tasks, whose own tools are in the catalogue) looks
// it up here, so it need not import index.ts: that would be an import cycle.
let catalogue: ReadonlyMap<string, Tool> | undefined;

export function setCatalogue(tools: readonly Tool[]): void {
  catalogue = new Map(tools.map((t) => [t.name, t]));
}

/** The tool of that name; throws when nothing loaded index.ts (a wiring fault, not "unknown tool"). */
export function toolByName(name: string): Tool | undefined {
  if (!catalogue) throw new Error('the tool catalogue is not loaded: import domain/tools/index.js');
  return catalogue.get(name);
}
