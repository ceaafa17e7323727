// The AES-256 key that seals stored API keys and secrets: ENCRYPTION_KEY, or in embedded mode one
// generated at first start and kept under DATA_DIR (mode 0600), so restarts can still open them.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError, decodeKey } from '../config.ts';

export function resolveEncryptionKey(config: Config): Buffer {
  if (config.ENCRYPTION_KEY) return config.ENCRYPTION_KEY;
  const file = join(config.DATA_DIR, 'encryption.key');
  mkdirSync(config.DATA_DIR, { recursive: true });
  try {
    // 'wx': fails if the file exists, so two racing starts never overwrite each other's key.
    writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = decodeKey(readFileSync(file, 'utf8').trim());
  if (!key) throw new ConfigError(`Invalid configuration: ${file} does not hold a 32-byte key`);
  return key;
}
