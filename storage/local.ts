// Local disk storage: each object is a file under DATA_DIR/files, at its key. One machine only
// (several API processes on several machines need the S3 driver).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteLimit, checkKey, ObjectMissingError, type StorageDriver } from './driver.ts';

const isMissing = (err: unknown) => (err as { code?: string } | null)?.code === 'ENOENT';

export function localStorage(dataDir: string): StorageDriver {
  const root = resolve(dataDir, 'files');
  // checkKey admits only letters, digits, dashes and slashes between them: the path stays under root.
  const pathOf = (key: string) => join(root, checkKey(key));

  async function remove(key: string) {
    try {
      await unlink(pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  return {
    name: 'local',
    async put(key, body, { maxBytes }) {
      const path = pathOf(key);
      const limit = new ByteLimit(maxBytes);
      let created = false;
      try {
        await mkdir(dirname(path), { recursive: true });
        // `wx`: a key is new; never write over an object that exists (nor remove it on failure).
        const file = createWriteStream(path, { flags: 'wx' }).once('open', () => {
          created = true;
        });
        await pipeline(body, limit, file);
      } catch (err) {
        body.destroy();
        if (created) await remove(key);
        throw err;
      }
      return { size: limit.bytes };
    },
    async get(key) {
      const path = pathOf(key);
      try {
        const { size } = await stat(path);
        return { body: createReadStream(path) as Readable, size };
      } catch (err) {
        if (isMissing(err)) throw new ObjectMissingError(key);
        throw err;
      }
    },
    delete: remove,
    async exists(key) {
      try {
        await stat(pathOf(key));
        return true;
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
    async close() {},
  };
}
