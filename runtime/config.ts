import { type Config, configurationReference as referenceOf, readConfig as readWith } from '../core/config.js';
import type { Env } from '../core/settings.js';
import { configSections } from './services.js';

/**
 * The configuration with every service's section (each declared in its folder, listed by runtime/services.ts), and
 * the secrets that were set, which the caller registers for redaction.
 */
export function readConfig(env: Env = process.env): { config: Config; secrets: string[] } {
  return readWith(configSections, env);
}

export function loadConfig(env: Env = process.env): Config {
  return readConfig(env).config;
}

/** docs/configuration.md, as the platform's and the services' tables say it should read. */
export function configurationReference(): string {
  return referenceOf(configSections);
}
