// The model adapter every AI feature uses (docs/llm.md). OpenAI-compatible when LLM_BASE_URL or
// LLM_API_KEY is set; otherwise the deterministic local model, so everything works offline.
import type { LlmConfig } from '../config.js';
import { LocalModelAdapter } from './local.js';
import { OpenAiCompatibleAdapter } from './openai.js';
import type { ModelAdapter } from './types.js';

export function createModelAdapter(config: LlmConfig): ModelAdapter {
  return config.baseUrl || config.apiKey ? new OpenAiCompatibleAdapter(config) : new LocalModelAdapter();
}

export * from './types.js';
export * from './tasks.js';
export { LocalModelAdapter } from './local.js';
export { OpenAiCompatibleAdapter } from './openai.js';
