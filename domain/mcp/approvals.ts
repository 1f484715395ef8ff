// Tool calls over MCP (docs/mcp.md): a `read` tool runs at once as the token's user in the token's
// workspace; any other risk creates an approval request (the tool, the client, the exact arguments,
// an expiry) that its user approves in the browser or through `POST /api/mcp/approvals/approve`.
// The `mcp-approval:<id>` workflow waits for the approval with a durable timer and then runs the
// call exactly once (or expires it); the client's retry of the same call returns that run's result.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { McpApproval, type IMcpApproval, type McpApprovalStatus } from '../../db/entities/McpApproval.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { uuidv7 } from '../../lib/ids.js';
import { demoReadOnly } from '../demo/demo.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import type { McpPrincipal } from './oauth.js';
import { findTool } from '../tools/index.js';
import { needsConfirmation, runTool, type Tool, type ToolContext } from '../tools/registry.js';
import { resolveActor } from '../workspaces.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import { runtimeSettings } from '../../lib/config.js';

/** How long an approval request waits (MCP_APPROVAL_TTL_SECONDS, default 15 minutes). */
export const approvalTtlMs = () => runtimeSettings.mcpApprovalTtlSeconds() * 1000;
/** How long a retry waits for an approved call that is still running before answering "still running". */
const RESULT_WAIT_MS = 10_000;
const MAX_RESULT_CHARS = 50_000;

export const argsHash = (args: unknown) => createHash('sha256').update(canonicalJson(args)).digest('hex');

export type ToolOutcome = { status: 'ok' | 'error'; result: unknown };

/** What a tool call over MCP answers: the tool's outcome, or the approval it waits for. */
export type McpCallAnswer =
  | { kind: 'outcome'; outcome: ToolOutcome; approvalId?: string }
  | { kind: 'approval_required'; approval: IMcpApproval }
  | { kind: 'running'; approval: IMcpApproval };

/** The token's user as an Actor in the token's workspace (their own, or a team owner's they still belong to). */
export function principalActor(em: EntityManager, p: McpPrincipal): Promise<Actor> {
  return resolveActor(em, { userId: p.userId, kind: 'session' }, p.ownerId === p.userId ? undefined : p.ownerId);
}

const clip = (v: unknown): unknown => {
  const s = JSON.stringify(v ?? null);
  return s.length > MAX_RESULT_CHARS ? { truncated: true, json: `${s.slice(0, MAX_RESULT_CHARS)}…` } : JSON.parse(s);
};

/** Runs a tool as `actor`; a domain or validation error is the call's outcome (the client sees it), not a crash. */
export async function invokeTool(tool: Tool, ctx: ToolContext, args: unknown): Promise<ToolOutcome> {
  try {
    return { status: 'ok', result: clip(await runTool(tool, ctx, args)) };
  } catch (err) {
    if (err instanceof AppError)
      return { status: 'error', result: { code: err.code, message: err.message, status: err.status } };
    if (err instanceof z.ZodError)
      return {
        status: 'error',
        result: {
          code: 'invalid_arguments',
          message: err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        },
      };
    throw err;
  }
}

/**
 * `tools/call`: a read tool runs now; a risky one answers with its approval request — the one already
 * open for this user, client, tool and exact arguments (pending: the same link; approved: its result
 * once the run finished), or a new one (row + workflow) when none is valid any more.
 */
export async function callTool(
  em: EntityManager,
  jobs: Jobs,
  principal: McpPrincipal,
  name: string,
  args: unknown,
  toolContext: Omit<ToolContext, 'em' | 'actor'>,
): Promise<McpCallAnswer> {
  const tool = findTool(name);
  if (!tool)
    return {
      kind: 'outcome',
      outcome: { status: 'error', result: { code: 'unknown_tool', message: `there is no tool named ${name}` } },
    };
  const actor = await principalActor(em, principal);
  const input = args ?? {};
  if (!needsConfirmation(tool))
    return { kind: 'outcome', outcome: await invokeTool(tool, { ...toolContext, em, actor }, input) };
  // Rules that hold before anyone approves: never ask a person to approve a call that cannot run.
  if (actor.isDemo)
    return {
      kind: 'outcome',
      outcome: { status: 'error', result: { code: 'demo_read_only', message: demoReadOnly().message, status: 403 } },
    };
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) {
    return {
      kind: 'outcome',
      outcome: {
        status: 'error',
        result: {
          code: 'invalid_arguments',
          message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        },
      },
    };
  }
  const hash = argsHash(input);
  const found = await em.transactional(async (tx) => {
    // One request per (user, client, tool, arguments) at a time, also under concurrent retries.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [
      `mcp-approval:${principal.userId}:${principal.clientId}:${name}:${hash}`,
    ]);
    const open = await tx.findOne(
      McpApproval,
      {
        user: principal.userId,
        client: principal.clientId,
        workspace: principal.workspaceId,
        toolName: name,
        argsHash: hash,
        status: { $ne: 'expired' },
        expiresAt: { $gt: new Date() },
      },
      { orderBy: { createdAt: 'desc' } },
    );
    if (open) return { approval: open, created: false };
    const approval = tx.create(McpApproval, {
      id: uuidv7(),
      workspace: principal.workspaceId,
      user: principal.userId,
      client: principal.clientId,
      grantId: principal.grantId,
      toolName: name,
      risk: tool.risk,
      args: input as object,
      argsHash: hash,
      expiresAt: new Date(Date.now() + approvalTtlMs()),
    });
    await tx.flush();
    return { approval, created: true };
  });
  if (found.created) {
    await jobs.start('mcp-approval', {
      approvalId: found.approval.id,
      workspaceId: principal.workspaceId,
      expiresAt: found.approval.expiresAt.toISOString(),
    });
    return { kind: 'approval_required', approval: found.approval };
  }
  return answerFor(em, found.approval);
}

/** The retry of an open request: its link (pending), its result (run), or "still running" after a short wait. */
async function answerFor(em: EntityManager, approval: IMcpApproval): Promise<McpCallAnswer> {
  let row = approval;
  const deadline = Date.now() + RESULT_WAIT_MS;
  while (row.status === 'approved' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    row = (await em.fork().findOne(McpApproval, row.id)) ?? row;
  }
  if (row.status === 'pending') return { kind: 'approval_required', approval: row };
  if (row.status === 'approved') return { kind: 'running', approval: row };
  const outcome = (row.result as ToolOutcome | null) ?? {
    status: 'error',
    result: { code: 'outcome_unknown', message: 'the call was started but its outcome was not recorded' },
  };
  return { kind: 'outcome', outcome, approvalId: row.id };
}

// ---------------------------------------------------------------------------------------------
// The REST operations (the owner only: another user's or another workspace's request is 404)

export async function requireApproval(em: EntityManager, actor: Actor, id: string): Promise<IMcpApproval> {
  const a = await em.findOne(
    McpApproval,
    { id, user: actor.userId, workspace: actor.workspaceId },
    { populate: ['client'] },
  );
  if (!a) throw notFound('approval');
  return a;
}

/** The status as the owner sees it: a pending request past its expiry is expired even before the timer wrote it. */
export const effectiveStatus = (a: Pick<IMcpApproval, 'status' | 'expiresAt'>, now = new Date()): McpApprovalStatus =>
  a.status === 'pending' && a.expiresAt <= now ? 'expired' : (a.status as McpApprovalStatus);

/**
 * Approves a pending request once: the conditional update `pending → approved` (not expired) decides,
 * then the workflow is told. Already decided or expired: 409 `approval_not_pending`.
 */
export async function approve(em: EntityManager, jobs: Jobs, actor: Actor, id: string): Promise<IMcpApproval> {
  const a = await requireApproval(em, actor, id);
  const decided: unknown[] = await em.execute(
    `update mcp_approvals set status = 'approved', decided_at = now() where id = ? and status = 'pending' and expires_at > now() returning id`,
    [a.id],
  );
  if (!decided.length)
    throw new AppError(
      409,
      'approval_not_pending',
      `the approval request is ${effectiveStatus(a) === 'expired' ? 'expired' : `already ${a.status}`}`,
    );
  // The answer is this decision, read before the workflow is woken: a call run at once (an eager
  // activity) would otherwise answer `executed` to the request that approved it.
  await em.refresh(a);
  // The row is the truth: if the signal is lost, the workflow's timer finds the row approved and runs the call.
  await jobs.signal('mcp-approval', { approvalId: a.id }, 'approve').catch(() => undefined);
  return a;
}

// ---------------------------------------------------------------------------------------------
// The workflow's activity

/**
 * Settles a request once the workflow woke (approved, or the expiry timer fired): an approved call
 * runs exactly once (`executed_at` claimed before it runs; a retried activity reports the stored
 * outcome); a pending one expires. Returns the final status.
 */
export async function settleApproval(
  em: EntityManager,
  toolContext: Omit<ToolContext, 'em' | 'actor'>,
  approvalId: string,
): Promise<McpApprovalStatus> {
  await em.execute(
    `update mcp_approvals set status = 'expired' where id = ? and status = 'pending' and expires_at <= now()`,
    [approvalId],
  );
  const a = await em.findOneOrFail(McpApproval, approvalId);
  if (a.status !== 'approved') return a.status as McpApprovalStatus;
  const claimed: unknown[] = await em.execute(
    `update mcp_approvals set executed_at = now() where id = ? and executed_at is null returning id`,
    [a.id],
  );
  let outcome: ToolOutcome;
  if (!claimed.length) {
    outcome = {
      status: 'error',
      result: { code: 'outcome_unknown', message: 'the call was started but its outcome was not recorded' },
    };
  } else if (argsHash(a.args) !== a.argsHash) {
    outcome = {
      status: 'error',
      result: { code: 'arguments_changed', message: 'the approved arguments do not match' },
    };
  } else {
    const tool = findTool(a.toolName);
    const ws = await em.findOneOrFail(Workspace, a.workspace.id);
    const actor = await resolveActor(
      em,
      { userId: a.user.id, kind: 'session' },
      ws.owner.id === a.user.id ? undefined : ws.owner.id,
    ).catch((err: unknown) => {
      if (err instanceof AppError) return err;
      throw err;
    });
    if (!tool)
      outcome = { status: 'error', result: { code: 'unknown_tool', message: `there is no tool named ${a.toolName}` } };
    else if (actor instanceof AppError)
      outcome = { status: 'error', result: { code: actor.code, message: actor.message, status: actor.status } };
    else outcome = await invokeTool(tool, { ...toolContext, em: em.fork(), actor }, a.args);
  }
  const status: McpApprovalStatus = outcome.status === 'ok' ? 'executed' : 'failed';
  await em.execute(`update mcp_approvals set status = ?, result = ?::jsonb where id = ? and status = 'approved'`, [
    status,
    JSON.stringify(outcome),
    a.id,
  ]);
  return status;
}
