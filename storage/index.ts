// The storage driver the configuration names: local disk under DATA_DIR (the default) or S3. The
// S3 SDK is loaded only when S3 is configured: it would add some 7 MB to every API process's heap.
import type { Config } from '../config.ts';
import type { StorageDriver } from './driver.ts';
import { localStorage } from './local.ts';
import type { S3Options } from './s3.ts';

export type { StorageDriver } from './driver.ts';

export function createStorage(config: Config): StorageDriver {
  if (config.STORAGE_DRIVER === 'local') return localStorage(config.DATA_DIR);
  return lazyS3({
    region: config.S3_REGION,
    bucket: config.S3_BUCKET as string,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
    ...(config.S3_ACCESS_KEY_ID ? { accessKeyId: config.S3_ACCESS_KEY_ID } : {}),
    ...(config.S3_SECRET_ACCESS_KEY ? { secretAccessKey: config.S3_SECRET_ACCESS_KEY } : {}),
  });
}

/** The S3 driver, its module imported on first use. */
function lazyS3(options: S3Options): StorageDriver {
  let loaded: Promise<StorageDriver> | undefined;
  const driver = () => {
    loaded ??= import('./s3.ts').then((m) => m.s3Storage(options));
    return loaded;
  };
  return {
    name: 's3',
    put: async (key, body, limits) => (await driver()).put(key, body, limits),
    get: async (key) => (await driver()).get(key),
    delete: async (key) => (await driver()).delete(key),
    exists: async (key) => (await driver()).exists(key),
    close: async () => {
      if (loaded) await (await loaded).close();
    },
  };
}
