// placeholder: replaced on main
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ConnectorAccountStatus } from '../lib/connectors/types.js';

export async function applyAccountStatus(_em: EntityManager, _status: ConnectorAccountStatus, _source: 'reconcile' | 'inbound'): Promise<void> {
  return;
}
