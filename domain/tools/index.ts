// Every domain's tools, in one table (see registry.ts). A domain adds its list here.
import { aiTools } from './ai.js';
import { discoveryTools } from './discovery.js';
import type { Tool } from './registry.js';

export const allTools = (): Tool[] => [...discoveryTools, ...aiTools] as Tool[];

export function findTool(name: string): Tool | undefined {
  return allTools().find((t) => t.name === name);
}
