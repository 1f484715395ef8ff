// Notifications of a workspace (db/entities/Notification.ts). Written inside the transaction of the
// change they report, so a rolled-back change leaves no notification behind.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Notification, type INotification } from '../db/entities/Notification.js';
import { Workspace } from '../db/entities/Workspace.js';

export async function notify(
  em: EntityManager,
  workspaceId: string,
  n: { kind: string; title: string; body: string; data?: Record<string, unknown> },
): Promise<INotification> {
  const row = em.create(Notification, {
    workspace: em.getReference(Workspace, workspaceId),
    kind: n.kind,
    title: n.title.slice(0, 200),
    body: n.body,
    data: n.data ?? {},
  });
  await em.flush();
  return row;
}
