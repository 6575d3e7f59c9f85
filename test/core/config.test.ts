import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationReference, loadConfig, readConfig } from '../../runtime/config.js';
import { ConfigError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.dataDir).toBe(path.resolve('data'));
    expect(c.temporalNamespace).toBe('default');
    expect(c.temporalUiPort).toBe(8233);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.temporalAddress).toBeUndefined();
    expect(c.publicBaseUrl).toBe('http://localhost:3000');
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.searchVectorCacheBytes).toBe(512 * 1024 * 1024);
    expect(c.embeddings).toEqual({
      cacheDir: path.resolve('data', 'models'),
      allowDownloads: true,
      modelHost: 'https://huggingface.co/',
      defaultModel: 'Xenova/all-MiniLM-L6-v2',
      defaultModelPath: undefined,
    });
    expect(c.outbound).toEqual({ allowRanges: [], allowHosts: [] });
    expect(c.push).toEqual({ vapidPublicKey: undefined, vapidPrivateKey: undefined, vapidSubject: 'mailto:gristmill@localhost', caFile: undefined });
    expect(c.recipes).toEqual({
      concurrency: 2,
      timeoutMs: 30_000,
      retryAttempts: 3,
      retryBackoffMs: 1000,
      processingEnabled: true,
      extractWaitMs: 120_000,
      manager: 'mealie',
      managerBaseUrl: undefined,
      managerPublicUrl: undefined,
      managerToken: undefined,
      mealieGroup: 'home',
      cookiesFile: undefined,
      language: undefined,
      units: 'keep',
      speech: 'auto',
      speechMaxSeconds: 1200,
      vision: false,
      visionMaxImages: 6,
      visionMaxFrames: 3,
      visionMaxImageBytes: 2_000_000,
    });
    expect(c.llm).toEqual({ baseUrl: undefined, apiKey: undefined, model: 'gpt-4o-mini', style: 'openai' });
    expect(c.transcription).toMatchObject({ asrBackend: 'callback', asrModel: undefined, asrLanguage: undefined, asrChunkMaxBytes: 24 * 1024 * 1024 });
  });

  it('derives defaults from the settings they depend on, each read once', () => {
    const c = loadConfig({ PORT: '8080', TEMPORAL_PORT: '9000', DATA_DIR: '/srv/gm', CPU_COUNT: '3', PUBLIC_BASE_URL: 'https://grist.example.com//' });
    expect(c).toMatchObject({ temporalUiPort: 10_000, publicBaseUrl: 'https://grist.example.com', searchThreads: 3 });
    expect(c.embeddings.cacheDir).toBe('/srv/gm/models');
    expect(c.transcription.ffmpegConcurrency).toBe(3);
    expect(c.push.vapidSubject).toBe('https://grist.example.com');
    expect(loadConfig({ PORT: '8080', CPU_COUNT: '16' })).toMatchObject({ publicBaseUrl: 'http://localhost:8080', searchThreads: 4 });
    expect(loadConfig({ CPU_COUNT: '500' }).transcription.ffmpegConcurrency).toBe(500); // a default is not range-checked
    expect(loadConfig({ ASR_BACKEND: 'OpenAI' }).transcription).toMatchObject({ asrBackend: 'openai', asrModel: 'whisper-1' });
    expect(loadConfig({ ASR_BACKEND: 'openai', ASR_MODEL: 'whisper-large-v3-turbo', ASR_LANGUAGE: 'DE' }).transcription).toMatchObject({ asrModel: 'whisper-large-v3-turbo', asrLanguage: 'de' });
  });

  it('takes an empty value as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '  ', LOG_LEVEL: '' })).toMatchObject({ port: 3000, host: '127.0.0.1', logLevel: 'info' });
  });

  it('stops on a bad value with a message naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('PORT must be a whole number from 0 to 65535, got "eighty"');
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow('DATABASE_URL must be a URL');
    expect(() => loadConfig({ BODY_LIMIT: 'lots' })).toThrow(/BODY_LIMIT must be a size/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of/);
    expect(() => loadConfig({ TASK_QUEUE_PREFIX: 'a b' })).toThrow(new ConfigError('TASK_QUEUE_PREFIX may only contain letters, digits, dot, dash and underscore'));
    expect(() => loadConfig({ QUEUE_CONCURRENCY: '0' })).toThrow(new ConfigError('QUEUE_CONCURRENCY must be a whole number from 1 to 256, got "0"'));
    expect(() => loadConfig({ QUEUE_PROCESSING_ENABLED: 'maybe' })).toThrow(/QUEUE_PROCESSING_ENABLED must be true or false/);
    expect(() => loadConfig({ RECIPE_MANAGER: 'paprika' })).toThrow(/RECIPE_MANAGER must be one of mealie, tandoor/);
    expect(() => loadConfig({ LLM_API_BASE_URL: 'not a url' })).toThrow(/LLM_API_BASE_URL must be a URL/);
    expect(() => loadConfig({ LLM_API_STYLE: 'anthropic' })).toThrow(new ConfigError('LLM_API_STYLE must be one of openai, ollama'));
    expect(() => loadConfig({ ASR_BACKEND: 'deepgram' })).toThrow(new ConfigError('ASR_BACKEND must be one of callback, openai, whisper-cpp, whisper-asr'));
    expect(() => loadConfig({ ASR_LANGUAGE: 'english' })).toThrow(/ASR_LANGUAGE must be a language code/);
    expect(() => loadConfig({ ASR_CHUNK_MAX_BYTES: '10kb' })).toThrow(/ASR_CHUNK_MAX_BYTES must be at least 64kb/);
  });

  it('reads values in any case where the choices allow it', () => {
    const c = loadConfig({ QUEUE_PROCESSING_ENABLED: 'false', RECIPE_MANAGER: 'Tandoor', LLM_API_STYLE: 'Ollama', LLM_API_BASE_URL: 'http://llm:8080/v1/' });
    expect(c.recipes).toMatchObject({ processingEnabled: false, manager: 'tandoor' });
    expect(c.llm).toMatchObject({ style: 'ollama', baseUrl: 'http://llm:8080/v1' });
  });
});

describe('configuration secrets', () => {
  it('are returned beside the configuration, for the caller to register, and not registered by reading', () => {
    const { config, secrets } = readConfig({
      API_KEY: 'api-unit-secret-0',
      DATABASE_URL: 'postgres://gm:db-unit-secret-1@db.lan/gristmill',
      SECRETS_KEY: 'ab'.repeat(32),
      ASR_API_KEY: 'asr-unit-secret-2',
      LLM_API_KEY: 'sk-unit-secret-3',
      RECIPE_MANAGER_TOKEN: 'tandoor-unit-secret-4',
      VAPID_PUBLIC_KEY: Buffer.alloc(65, 4).toString('base64url'),
      VAPID_PRIVATE_KEY: Buffer.alloc(32, 7).toString('base64url'),
      HOST: 'not-a-secret',
    });
    expect(secrets.sort()).toEqual(
      ['api-unit-secret-0', 'db-unit-secret-1', 'ab'.repeat(32), 'asr-unit-secret-2', 'sk-unit-secret-3', 'tandoor-unit-secret-4', Buffer.alloc(32, 7).toString('base64url')].sort(),
    );
    expect(config.databaseUrl).toBe('postgres://gm:db-unit-secret-1@db.lan/gristmill');
    expect(redact('key sk-unit-secret-3 and tandoor-unit-secret-4')).toBe('key sk-unit-secret-3 and tandoor-unit-secret-4');
    expect(readConfig({}).secrets).toEqual([]);
  });
});

describe('configuration reference', () => {
  const file = path.join(import.meta.dirname, '../../docs/configuration.md');

  it('docs/configuration.md is what the settings table says', () => {
    const expected = configurationReference();
    const actual = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    expect(actual === expected, 'docs/configuration.md differs from the settings rows: run `npm run docs:config`').toBe(true);
  });

  it('lists every variable once, with a meaning', () => {
    const rows = configurationReference().split('\n').filter((l) => l.startsWith('| `'));
    const names = rows.map((l) => /^\| `([A-Z0-9_]+)`/.exec(l)![1]!);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['PORT', 'DATA_DIR', 'CPU_COUNT', 'PUBLIC_BASE_URL', 'SECRETS_KEY', 'WORKER_QUEUES', 'RECIPE_COOKIES_FILE']));
    expect(names.length).toBeGreaterThanOrEqual(75);
    for (const row of rows) expect(row.split(' | ').at(-1)!.replace(/ \|$/, '').trim(), row).not.toBe('');
  });
});
