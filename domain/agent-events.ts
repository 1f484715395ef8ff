// After an agent's status or settings change (committed), the process that hosts the Temporal
// client keeps the agent's Schedule in step (api/agents/schedules.ts). Domain code only announces;
// it never talks to Temporal. In a process without a listener (CLIs) the next scheduled run still
// checks the agent's status before it searches anything.
import type { IDiscoveryAgent } from '../db/entities/DiscoveryAgent.js';

type Listener = (change: { agent: IDiscoveryAgent; deleted: boolean }) => Promise<void> | void;
const listeners = new Set<Listener>();

export function onAgentChanged(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export async function agentChanged(agent: IDiscoveryAgent, deleted = false): Promise<void> {
  await Promise.all([...listeners].map((fn) => fn({ agent, deleted })));
}
