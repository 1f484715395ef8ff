import type { TeamRole } from '../db/entities/TeamMember.js';

/** Who authenticated, and with which credential. */
export interface AuthInfo {
  userId: string;
  kind: 'session' | 'pat';
  sessionId?: string;
  tokenId?: string;
  /** The user's profile as read while authenticating (see lib/credential-cache.ts for freshness). */
  user?: UserSnapshot;
}

export interface UserSnapshot {
  id: string;
  email: string;
  name: string | null;
  timezone: string | null;
  locale: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The effective identity an operation runs as: the authenticated user, acting in their own workspace
 * or (with X-Acting-As) in the workspace of a team owner, limited to the products they were given.
 */
export interface Actor {
  userId: string;
  workspaceId: string;
  ownerId: string;
  role: TeamRole;
  allApps: boolean;
  appIds: string[];
  actingAs: boolean;
  /** The effective workspace is a Demo workspace: read-only (see domain/demo/demo.ts). */
  isDemo: boolean;
}

export const canAccessApp = (actor: Actor, appId: string): boolean => actor.allApps || actor.appIds.includes(appId);
