import { Client, Connection } from '@temporalio/client';
import type { Config } from './config.js';

/** One shared Temporal client per process. */
export async function connectTemporal(config: Config): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}
