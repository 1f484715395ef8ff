// The admin CLI's commands for what support staff publish or moderate (docs/notifications.md,
// docs/ideas-views-onboarding.md), wired into scripts/admin.ts:
//
//   announce --title T --body B [--cta-label L --cta-url U] [--plans free,starter|all]
//            [--starts-at ISO] [--ends-at ISO] [--by NAME]
//   announcements [--all]
//   unpublish --id ID
//   remove-idea --id ID
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  AnnouncementInputError,
  listForStaff,
  publishAnnouncement,
  unpublishAnnouncement,
} from '../domain/notifications/announcements.js';
import { removeIdea } from '../domain/ideas/ideas.js';
import { PLAN_IDS } from '../domain/billing/plans.js';

export const ANNOUNCEMENT_USAGE = `  announce --title T --body B [--cta-label L --cta-url U] [--plans ${PLAN_IDS.join(',')}|all] [--starts-at ISO] [--ends-at ISO] [--by NAME]
  announcements [--all]
  unpublish --id <announcement id>
  remove-idea --id <idea id>`;

export const ANNOUNCEMENT_COMMANDS = ['announce', 'announcements', 'unpublish', 'remove-idea'] as const;

/** A parsed command, ready to run against the database. */
export interface BoardCommand {
  name: (typeof ANNOUNCEMENT_COMMANDS)[number];
  run(em: EntityManager): Promise<string>;
}

type Fail = (message: string, exitCode?: number) => Error;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

const fmt = (d: Date | string | null) => (d ? new Date(d).toISOString() : '-');

/**
 * Parses one of these commands (usage errors: `fail(message, 2)`); undefined for any other command.
 * Problems with the content itself (an unknown plan, a window in the past) are found when it runs
 * and exit 1.
 */
export function parseAnnouncementCommand(argv: string[], fail: Fail): BoardCommand | undefined {
  const [command, ...rest] = argv;
  if (!(ANNOUNCEMENT_COMMANDS as readonly string[]).includes(command)) return undefined;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        title: { type: 'string' },
        body: { type: 'string' },
        'cta-label': { type: 'string' },
        'cta-url': { type: 'string' },
        plans: { type: 'string' },
        'starts-at': { type: 'string' },
        'ends-at': { type: 'string' },
        by: { type: 'string' },
        all: { type: 'boolean', default: false },
        id: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    throw fail(`${(err as Error).message}\nusage:\n${ANNOUNCEMENT_USAGE}`, 2);
  }
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string).trim() : undefined);
  const required = (k: string) => {
    const v = str(k);
    if (!v) throw fail(`--${k} is required`, 2);
    return v;
  };
  const time = (k: string) => {
    const v = str(k);
    if (v === undefined) return undefined;
    if (!ISO.test(v) || Number.isNaN(Date.parse(v)))
      throw fail(`--${k} must be an ISO 8601 date or time (e.g. 2026-12-01T09:00:00Z)`, 2);
    return new Date(v);
  };
  const id = () => {
    const v = required('id');
    if (!UUID.test(v)) throw fail('--id must be a UUID', 2);
    return v.toLowerCase();
  };
  switch (command) {
    case 'announce': {
      const title = required('title');
      const body = required('body');
      const plansArg = str('plans');
      const plans =
        !plansArg || plansArg === 'all'
          ? null
          : plansArg
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean);
      const startsAt = time('starts-at');
      const endsAt = time('ends-at');
      const by = str('by') ?? safeUser();
      return {
        name: 'announce',
        run: async (em) => {
          try {
            const newId = await publishAnnouncement(em, {
              title,
              body,
              ctaLabel: str('cta-label'),
              ctaUrl: str('cta-url'),
              plans,
              startsAt,
              endsAt,
              createdBy: by,
            });
            const [a] = (await listForStaff(em, { all: true, limit: 1 })).filter((x) => x.id === newId);
            return `announcement ${newId}: ${a?.status ?? 'published'} for ${plans ? plans.join(', ') : 'every plan'}, from ${fmt(a?.starts_at ?? startsAt ?? null)} until ${endsAt ? fmt(endsAt) : 'unpublished'}`;
          } catch (err) {
            if (err instanceof AnnouncementInputError) throw fail(err.message, 1);
            throw err;
          }
        },
      };
    }
    case 'announcements': {
      const all = values.all === true;
      return {
        name: 'announcements',
        run: async (em) => {
          const rows = await listForStaff(em, { all });
          if (!rows.length)
            return all
              ? 'no announcements'
              : 'no live or scheduled announcements (--all shows ended and unpublished ones)';
          return rows
            .map(
              (a) =>
                `${a.id}  ${a.status.padEnd(11)}  ${fmt(a.starts_at)} → ${a.ends_at ? fmt(a.ends_at) : 'no end'}  plans: ${a.plans ? a.plans.join(',') : 'all'}  dismissed: ${a.dismissals}  cta clicks: ${a.cta_clicks}  "${a.title}"${a.cta_url ? `  [${a.cta_label}](${a.cta_url})` : ''}`,
            )
            .join('\n');
        },
      };
    }
    case 'unpublish': {
      const target = id();
      return {
        name: 'unpublish',
        run: async (em) => {
          const r = await unpublishAnnouncement(em, target);
          if (!r) throw fail(`no announcement ${target}`, 1);
          return `announcement ${target} ("${r.title}"): ${r.already ? 'was already unpublished' : 'unpublished'}`;
        },
      };
    }
    case 'remove-idea': {
      const target = id();
      return {
        name: 'remove-idea',
        run: async (em) => {
          const r = await removeIdea(em, target);
          if (!r) throw fail(`no idea ${target}`, 1);
          return `idea ${target} ("${r.title}") removed with its votes`;
        },
      };
    }
  }
  return undefined;
}

function safeUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
