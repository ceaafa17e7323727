// The settings blocks run with, taken from the configuration once per runner.
import type { Config } from '../config.ts';
import type { RunnerSettings } from './blocks/block.ts';

export function runnerSettings(config: Config): RunnerSettings {
  return {
    httpAllowList: config.HTTP_ALLOW_LIST,
    httpMaxResponseBytes: config.HTTP_MAX_RESPONSE_BYTES,
    ...(config.OPENAI_BASE_URL ? { openaiBaseUrl: config.OPENAI_BASE_URL } : {}),
    ...(config.OPENAI_API_KEY ? { openaiApiKey: config.OPENAI_API_KEY } : {}),
    functionTimeoutMs: config.FUNCTION_TIMEOUT_MS,
    functionMemoryMb: config.FUNCTION_MEMORY_MB,
  };
}
