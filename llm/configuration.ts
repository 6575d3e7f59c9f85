import type { ConfigSection, SectionRows } from '../core/config.js';
import { baseUrl, oneOf, text } from '../core/settings.js';

/**
 * How the language model is asked (llm/chat.ts): `openai`, chat completions with a `json_schema` response format;
 * `ollama`, Ollama's native chat API with the schema as its `format`.
 */
export const LLM_API_STYLES = ['openai', 'ollama'] as const;
export type LlmApiStyle = (typeof LLM_API_STYLES)[number];

/** The one language model every service asks (recipes read posts with it, transcription translates and summarises). */
export interface LlmConfig {
  /** OpenAI-compatible chat completions (or Ollama's address); unset: what needs the model fails saying so. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  style: LlmApiStyle;
}

declare module '../core/config.js' {
  interface ServiceConfigs {
    /** The language model shared by the recipe queue and transcription (llm/). */
    llm: LlmConfig;
  }
}

const ROWS: SectionRows<LlmConfig> = {
  baseUrl: {
    variable: 'LLM_API_BASE_URL', section: 'llm', parse: baseUrl,
    meaning:
      "an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or a local server's `/v1` (with `LLM_API_STYLE=ollama`, Ollama's address, " +
      'e.g. `http://localhost:11434`); unset: recipe items fail at parsing, and translations and summaries fail, saying so',
  },
  apiKey: { variable: 'LLM_API_KEY', section: 'llm', parse: text(), secret: true, meaning: 'sent as `Authorization: Bearer <key>`' },
  model: { variable: 'LLM_MODEL', section: 'llm', parse: text(), default: 'gpt-4o-mini', meaning: 'the model asked' },
  style: {
    variable: 'LLM_API_STYLE', section: 'llm', parse: oneOf(LLM_API_STYLES, { anyCase: true }), default: 'openai',
    meaning: "how the model is asked: `openai` (chat completions, `json_schema`) or `ollama` (Ollama's native `/api/chat` with the schema as `format`)",
  },
};

/** The language model's settings (docs/configuration.md, "Language model"); runtime/services.ts reads them with the services'. */
export const llmConfiguration: ConfigSection = {
  sections: {
    llm: { title: 'Language model', about: 'The OpenAI-compatible (or Ollama) chat model the recipe queue and transcription share (llm/).' },
  },
  table: { llm: ROWS },
};
