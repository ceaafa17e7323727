import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';

describe('configuration', () => {
  it('has a default for everything a first start needs', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      ADMIN_PORT: 3001,
      ADMIN_HOST: '127.0.0.1',
      DATA_DIR: './.data',
      LOG_LEVEL: 'info',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.ENCRYPTION_KEY).toBeUndefined();
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).PORT).toBe(3000);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ADMIN_PORT', '-1'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['ENCRYPTION_KEY', 'short'],
    ['ADMIN_TOKEN', 'tiny'],
    ['BOOTSTRAP_API_KEY', 'sk-other-abcdefghijklmnopqrstuvwxyz'],
    ['RUN_MIGRATIONS', 'maybe'],
    ['PUBLIC_URL', 'ftp://example.com'],
  ])('stops on a wrong %s with one line naming it', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(name);
    expect(message.split('\n')).toHaveLength(1);
  });

  it('never repeats a secret value in its message', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'secret' })).toThrow(/^(?!.*secret").*ADMIN_TOKEN/);
  });

  it('requires ENCRYPTION_KEY on a shared server, so every process can open stored keys', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(/ENCRYPTION_KEY/);
    const config = loadConfig({ DATABASE_URL: 'postgres://localhost/x', ENCRYPTION_KEY: 'ab'.repeat(32) });
    expect(config.ENCRYPTION_KEY?.length).toBe(32);
  });

  it('accepts the encryption key as hex or base64', () => {
    const bytes = Buffer.alloc(32, 7);
    expect(loadConfig({ ENCRYPTION_KEY: bytes.toString('hex') }).ENCRYPTION_KEY).toEqual(bytes);
    expect(loadConfig({ ENCRYPTION_KEY: bytes.toString('base64') }).ENCRYPTION_KEY).toEqual(bytes);
  });
});
