// Recording a load of an email's open pixel or a follow of one of its links (docs/tracking.md). One
// transaction with the action's row locked, so two hits of one email (a scanner's burst arrives in
// parallel) are classified one after the other, each seeing the other. Nothing about the client is
// stored: the address and user agent only decide the class, then are dropped.
import type { EntityManager } from '@mikro-orm/postgresql';
import { linksOf } from '../../lib/connectors/mailbox/compose.js';
import { uuidv7 } from '../../lib/ids.js';
import { burstPartners, classifyHit, type EarlierEvent, type TrackingClass, type TrackingKind } from './classify.js';

/**
 * Events kept per action and kind: far above what a person makes (a few opens, a click or two per
 * link), low enough that a forwarded or leaked link cannot fill the table. Past it nothing more is
 * recorded (the first human open and click are long set by then); a click still redirects.
 */
export const MAX_EVENTS_PER_KIND = 20;

export interface TrackingHit {
  actionId: string;
  kind: TrackingKind;
  /** The link's place in the body (clicks). */
  linkIndex?: number;
  ip: string;
  userAgent: string | null | undefined;
  /** Default: now. */
  at?: Date;
}

/** An absolute http(s) URL as a Location header may carry it (non-ASCII percent-encoded), or null. */
function redirectTarget(url: string | undefined): string | undefined {
  if (!url || !URL.canParse(url)) return undefined;
  const u = new URL(url);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
}

/** Link `index` of an email's stored body (`content.body`, numbered as the HTML part numbers them), or undefined. */
const linkAt = (body: string | null, index: number | undefined): string | undefined =>
  body !== null && index !== undefined && Number.isInteger(index) && index >= 0
    ? redirectTarget(linksOf(body)[index])
    : undefined;

/** Where link `index` of an action's email leads (no recording: a HEAD request, a link check). */
export async function trackedLink(em: EntityManager, actionId: string, index: number): Promise<string | undefined> {
  const [a] = await em.execute<{ body: string | null }[]>(
    `select content->>'body' as body from scheduled_actions where id = ? and type = 'email'`,
    [actionId],
  );
  return a ? linkAt(a.body, index) : undefined;
}

/**
 * Records one hit of an action's email when the action is a sent email of a campaign tracking that
 * kind (`track_opens`, `track_clicks`): a `tracking_events` row classified by domain/tracking/classify.ts,
 * the earlier clicks of a burst reclassified machine, and the action's `opened_at` (the first human
 * open or click) and `clicked_at` (the first human click), both read from the events: a reclassified
 * click clears them when no human event remains. A click answers its link's URL whether recorded or
 * not, so a tracked link keeps working when tracking was turned off since; an index the body has not: no URL.
 */
export async function recordTrackingHit(
  em: EntityManager,
  hit: TrackingHit,
): Promise<{ recorded: boolean; url?: string }> {
  return em.transactional(async (tx) => {
    const [a] = await tx.execute<
      {
        workspace_id: string;
        campaign_id: string;
        type: string;
        state: string;
        delivered_at: Date | null;
        body: string | null;
        track_opens: boolean;
        track_clicks: boolean;
      }[]
    >(
      // An email is in its recipient's mailbox before its send is recorded (the SMTP send and the Sent
      // copy come first), and a privacy proxy fetches the pixel at delivery: a claimed send (`executing`)
      // counts as delivered when it was claimed.
      `select a.workspace_id, a.campaign_id, a.type, a.state, coalesce(a.executed_at, a.claimed_at) as delivered_at, a.content->>'body' as body, c.track_opens, c.track_clicks
         from scheduled_actions a join campaigns c on c.id = a.campaign_id where a.id = ? for update of a`,
      [hit.actionId],
    );
    if (!a || a.type !== 'email') return { recorded: false };
    const url = hit.kind === 'click' ? linkAt(a.body, hit.linkIndex) : undefined;
    const answer = url ? { url } : {};
    const tracked = hit.kind === 'open' ? a.track_opens : a.track_clicks && !!url;
    if (!tracked || !['executing', 'executed'].includes(a.state) || !a.delivered_at)
      return { recorded: false, ...answer };

    const earlier = (
      await tx.execute<
        { id: string; kind: TrackingKind; link_index: number | null; class: TrackingClass; occurred_at: Date }[]
      >(
        `select id, kind, link_index, class, occurred_at from tracking_events where action_id = ? order by occurred_at, id`,
        [hit.actionId],
      )
    ).map((e): EarlierEvent => ({
      id: e.id,
      kind: e.kind,
      linkIndex: e.link_index,
      class: e.class,
      at: new Date(e.occurred_at),
    }));
    if (earlier.filter((e) => e.kind === hit.kind).length >= MAX_EVENTS_PER_KIND) return { recorded: false, ...answer };

    const at = hit.at ?? new Date();
    const facts = {
      kind: hit.kind,
      at,
      deliveredAt: new Date(a.delivered_at),
      ip: hit.ip,
      userAgent: hit.userAgent,
      linkIndex: hit.linkIndex ?? null,
      earlier,
    };
    const c = classifyHit(facts);
    await tx.execute(
      `insert into tracking_events (id, workspace_id, campaign_id, action_id, kind, link_index, class, reason, source, occurred_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        uuidv7(),
        a.workspace_id,
        a.campaign_id,
        hit.actionId,
        hit.kind,
        hit.kind === 'click' ? hit.linkIndex : null,
        c.class,
        c.reason,
        c.source,
        at,
      ],
    );

    // A burst makes its earlier human clicks machine too.
    const reclassify =
      hit.kind === 'click'
        ? burstPartners(facts)
            .filter((e) => e.class === 'human')
            .map((e) => e.id)
        : [];
    if (reclassify.length)
      await tx.execute(`update tracking_events set class = 'machine', reason = 'link_burst' where id in (?)`, [
        reclassify,
      ]);
    // The person's first open and click, read again from the events whenever their human ones changed.
    // A person's click is an open too: they read the email (with images off, no pixel loaded).
    if (c.class === 'human' || reclassify.length) {
      await tx.execute(
        `update scheduled_actions a set opened_at = f.opened, clicked_at = f.clicked, updated_at = now()
           from (select min(occurred_at) filter (where class = 'human') as opened, min(occurred_at) filter (where class = 'human' and kind = 'click') as clicked
                   from tracking_events where action_id = ?) f
          where a.id = ? and (a.opened_at is distinct from f.opened or a.clicked_at is distinct from f.clicked)`,
        [hit.actionId, hit.actionId],
      );
    }
    return { recorded: true, ...answer };
  });
}
