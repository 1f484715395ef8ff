// Small SQL helpers shared by the domain's hand-written queries.

/** A user's text as a literal inside a LIKE/ILIKE pattern (`\` is the escape character). */
export const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
