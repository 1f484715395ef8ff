// Events about one thing apply in the order they happened (docs/providers.md "Order of events"):
// senders deliver out of order and more than once, and we handle deliveries concurrently, so state
// derived from events records on its row the event it last applied, by its time and id, and an apply
// is one UPDATE whose WHERE holds only for a newer event. The row's own lock (taken by that UPDATE)
// orders concurrent applies: nothing is locked across calls, and the outcome does not depend on
// which delivery arrived or committed first.

/** Where an event stands among those about one row: its time, then its id (ties broken by id). */
export interface EventStamp {
  at: Date;
  id: string;
}

// A row that applied no event yet is older than any; ids compare bytewise (collation "C"), so ties
// are decided the same way on every database.
const pair = (at: string, id: string) => `(coalesce(${at}, '-infinity'::timestamptz), coalesce(${id}, '') collate "C")`;

/**
 * SQL: the event is newer than the one recorded in the row's `atCol` / `idCol`. The event is given
 * as two SQL expressions, by default two placeholders to bind with `stampParams(e)`. A repeat of the
 * recorded event is not newer.
 */
export const isNewerThanApplied = (
  atCol: string,
  idCol: string,
  event: [at: string, id: string] = ['?::timestamptz', '?::text'],
): string => `${pair(atCol, idCol)} < ${pair(...event)}`;

export const stampParams = (e: EventStamp): [Date, string] => [e.at, e.id];

/**
 * What we observed ourselves (a status read at the connector, a connection started here) stamped like
 * an event: the time of the observation, and an id no sender's event has (theirs carry no `~`).
 */
export const observedId = (source: string): string => `~${source}`;
export const observedAt = (at: Date, source: string): EventStamp => ({ at, id: observedId(source) });
