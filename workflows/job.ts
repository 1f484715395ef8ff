// A job declared beside its workflow (docs/architecture.md, "Add a long-running job"): what the
// Temporal adapter (jobs/temporal.ts) needs to start, signal and find it, as pure data and functions
// of the port's input (domain/jobs.ts `JobTypes`). Safe in the workflow sandbox: it only builds
// values, and names the workflow function itself, so the arguments are that function's.
import type { QueryDefinition, SignalDefinition } from '@temporalio/common';
import type { JobInput, JobKey, JobKind, JobTypes } from '../domain/jobs.js';
import type { JobKindName } from './search-attributes.js';

/**
 * What a repeated start of the same id does:
 * - `while-open`: nothing while a run is open; after it closed, a new run starts.
 * - `never-again`: nothing, even after it closed (an event or an operation is handled once).
 * - `join`: the open run goes on and the caller gets its run id; after it closed, a new run starts.
 * - `after-previous`: runs share the id and are told apart by `memo[runKey]`: the same run is joined,
 *   a previous one still closing is waited for (briefly), else 409 with `busy`.
 */
export type Repeat =
  'while-open' | 'never-again' | 'join' | { afterPrevious: string; busy: { code: string; message: string } };

type Signals<K extends JobKind> = JobTypes[K] extends { signals: infer S }
  ? { signals: { [N in keyof S]: SignalDefinition<any[]> } }
  : { signals?: never };
type Queries<K extends JobKind> = JobTypes[K] extends { queries: infer Q }
  ? { queries: { [N in keyof Q]: QueryDefinition<Q[N]> } }
  : { queries?: never };

export type JobDeclaration<K extends JobKind, W extends (...args: any[]) => Promise<unknown>> = {
  kind: K;
  /** The workflow function: a start names it, so tsc checks `args` against its parameters. */
  workflow: W;
  /** The workflow id from business keys (an operator finds the job by what it is about). */
  id: (key: JobKey<K>) => string;
  args: (input: JobInput<K>) => Parameters<W>;
  /** The WorkspaceId / AppId search attributes (the JobKind one is `kind`). */
  scope: (input: JobInput<K>) => { workspaceId?: string | null; appId?: string | null };
  memo: (input: JobInput<K>) => Record<string, unknown>;
  repeat: Repeat;
  /** Repeat the start through a short outage of the server (a start that landed is then "already started"). */
  retryTransient?: boolean;
} & Signals<K> &
  Queries<K>;

/** Any declaration, as the adapter holds them (typed by kind where it is declared, not here). */
export interface AnyJob {
  kind: JobKind;
  workflow: (...args: any[]) => Promise<unknown>;
  id: (key: any) => string;
  args: (input: any) => unknown[];
  scope: (input: any) => { workspaceId?: string | null; appId?: string | null };
  memo: (input: any) => Record<string, unknown>;
  repeat: Repeat;
  retryTransient?: boolean;
  signals?: Record<string, SignalDefinition<any[]>>;
  queries?: Record<string, QueryDefinition<any>>;
}

/** Declares the job of kind `kind` (a key of the port's `JobTypes`). */
export function defineJob<K extends JobKind, W extends (...args: any[]) => Promise<unknown>>(
  kind: K,
  declaration: Omit<JobDeclaration<K, W>, 'kind'>,
): JobDeclaration<K, W> {
  return { kind, ...declaration } as JobDeclaration<K, W>;
}

/** True for a job declaration among a module's exports (jobs/temporal.ts collects them from workflows/index.ts). */
export function isJobDeclaration(value: unknown): value is AnyJob {
  return typeof value === 'object' && value !== null && 'kind' in value && 'workflow' in value && 'repeat' in value;
}

/** When a Schedule fires: every interval (`'10 minutes'`), or at times of the calendar (UTC). */
export type Every = { every: string } | { at: { dayOfMonth?: number; hour: number; minute: number } };

/** A recurring job: a Temporal Schedule that starts its workflow (workers/schedules.ts creates or updates it at start-up). */
export interface ScheduleDeclaration<W extends (...args: any[]) => Promise<unknown>> {
  /** The Schedule's id (`schedule:<name>`). */
  id: string;
  /** The prefix of its runs' workflow ids (Temporal appends the scheduled time). */
  runs: string;
  workflow: W;
  args: Parameters<W>;
  kind: JobKindName;
  every: Every;
  /** How late a missed firing (the server was down) may still run. */
  catchupWindow: string;
  /** A firing while the previous run is still open: `skip` it, or `buffer-one` to run once after. */
  overlap: 'skip' | 'buffer-one';
  description: string;
  /** Only while the connector is the local sandbox network (CONNECTOR_PROVIDER not unipile). */
  sandboxOnly?: boolean;
}

export function defineSchedule<W extends (...args: any[]) => Promise<unknown>>(
  declaration: ScheduleDeclaration<W>,
): ScheduleDeclaration<W> & { schedule: true } {
  return { ...declaration, schedule: true };
}

export type AnySchedule = ScheduleDeclaration<(...args: any[]) => Promise<unknown>> & { schedule: true };

/** True for a schedule declaration among a module's exports (workers/schedules.ts collects them from workflows/index.ts). */
export function isScheduleDeclaration(value: unknown): value is AnySchedule {
  return typeof value === 'object' && value !== null && (value as { schedule?: unknown }).schedule === true;
}
