// Files through each storage driver: local disk and S3 (against a small S3-compatible server run
// by the test). Bytes come back as they went in, the 100 MB cap refuses the byte past it while
// streaming (in-process and over a real port) and leaves nothing behind, and a refused upload's
// bytes are removed from the driver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { MAX_FILE_BYTES } from '../../db/files.ts';
import { listen } from '../../http/serve.ts';
import { createStorage } from '../../storage/index.ts';
import { type S3TestServer, startS3Server } from '../helpers/s3-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import {
  type Content,
  digestBody,
  download,
  expectError,
  expectOk,
  fileRows,
  localBlobs,
  sha256,
  upload,
  uploadOverHttp,
} from './files-helpers.ts';

const MB = 1024 * 1024;

describe.each(['local', 's3'] as const)('with the %s driver', (driver) => {
  let s3: S3TestServer | undefined;
  let svc: TestService;
  let tenant: Tenant;
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    s3 = driver === 's3' ? await startS3Server() : undefined;
    svc = await startTestService(
      s3
        ? {
            STORAGE_DRIVER: 's3',
            S3_ENDPOINT: s3.url,
            S3_BUCKET: s3.bucket,
            S3_ACCESS_KEY_ID: 'test-access-key',
            S3_SECRET_ACCESS_KEY: 'test-secret-key',
          }
        : {},
    );
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    server = await listen(svc.app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server.close();
    await svc.close();
    await s3?.close();
  });

  /** Every object the driver holds, and (S3) the multipart uploads left open. */
  const stored = () => (s3 ? [...s3.objects.keys()] : localBlobs(svc));
  const expectNothingLeft = async (before: string[]) => {
    expect(stored().sort()).toEqual([...before].sort());
    if (s3) expect(s3.openUploads()).toBe(0);
  };

  async function roundTrip(name: string, content: Content, via: 'app' | 'http' = 'app') {
    const workspaceId = tenant.workspace.id;
    const res =
      via === 'app'
        ? await upload(svc, tenant.key, { workspaceId, name, content })
        : await uploadOverHttp(server.url, tenant.key, { workspaceId, name, content });
    expectOk(res);
    const file = res.body.data.file;
    expect(file.size).toBe(Buffer.isBuffer(content) ? content.length : content.size);
    expect(stored()).toContain(file.key);
    const got = await download(svc, tenant.key, file.id, workspaceId);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe(String(file.size));
    expect(await digestBody(got)).toEqual({ sha256: sha256(content), size: file.size });
    return file;
  }

  it('gives back a small file byte for byte', async () => {
    await roundTrip('small.txt', Buffer.from('héllo wörld\n'));
    if (s3) expect(s3.operations).toContain('PutObject');
  });

  it('gives back an empty file', async () => {
    await roundTrip('empty.txt', Buffer.alloc(0));
  });

  it('gives back a file of several storage parts byte for byte', async () => {
    const before = s3?.operations.length ?? 0;
    await roundTrip('parts.bin', { size: 12 * MB + 5 });
    if (s3) {
      const ops = s3.operations.slice(before);
      expect(ops.filter((o) => o === 'UploadPart')).toHaveLength(3);
      expect(ops).toContain('CompleteMultipartUpload');
    }
  });

  it('accepts exactly 100 MB over HTTP and gives it back byte for byte', async () => {
    await roundTrip('limit.bin', { size: MAX_FILE_BYTES }, 'http');
  });

  it.each(['app', 'http'] as const)(
    'refuses 100 MB + 1 byte with 413 (%s), leaving no row and no stored bytes',
    async (via) => {
      const workspaceId = tenant.workspace.id;
      const before = stored();
      const name = `too-big-${via}.bin`;
      const o = { workspaceId, name, content: { size: MAX_FILE_BYTES + 1 } };
      const res =
        via === 'app' ? await upload(svc, tenant.key, o) : await uploadOverHttp(server.url, tenant.key, o);
      expectError(res, 413, /104857600 bytes/);
      expect((await fileRows(svc, workspaceId)).map((r) => r.name)).not.toContain(name);
      await expectNothingLeft(before);
      if (s3) expect(s3.operations).toContain('AbortMultipartUpload');
    },
  );

  it('refuses 100 MB + 1 byte also when the workspaceId comes last', async () => {
    const before = stored();
    const res = await upload(svc, tenant.key, {
      workspaceId: tenant.workspace.id,
      name: 'late-too-big.bin',
      content: { size: MAX_FILE_BYTES + 1 },
      order: 'fileFirst',
    });
    expectError(res, 413);
    await expectNothingLeft(before);
  });

  it('removes the stored bytes of an upload refused after it was stored (duplicate name)', async () => {
    const workspaceId = tenant.workspace.id;
    await roundTrip('taken.bin', { size: 6 * MB });
    const before = stored();
    const res = await upload(svc, tenant.key, {
      workspaceId,
      name: 'taken.bin',
      content: { size: 6 * MB },
      order: 'fileFirst',
    });
    expectError(res, 409);
    await expectNothingLeft(before);
  });

  it('stores under keys it made, and refuses any other key', async () => {
    const storage = createStorage(svc.config);
    try {
      for (const key of ['../escape', 'a/../../b', '/abs', 'a//b', 'name with space', 'ü/x', '']) {
        await expect(storage.exists(key)).rejects.toThrow(/Not a storage key/);
        await expect(storage.delete(key)).rejects.toThrow(/Not a storage key/);
      }
      expect(await storage.exists('pending/00000000-0000-4000-8000-000000000000')).toBe(false);
      await storage.delete('pending/00000000-0000-4000-8000-000000000000');
    } finally {
      await storage.close();
    }
  });
});

describe('storage configuration', () => {
  const fails = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('defaults to local storage, and S3 region us-east-1 with path-style URLs', () => {
    expect(loadConfig({})).toMatchObject({
      STORAGE_DRIVER: 'local',
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: true,
    });
  });

  it('stops on s3 without a bucket, naming S3_BUCKET in one line', () => {
    const message = fails({ STORAGE_DRIVER: 's3' });
    expect(message).toBe('Invalid configuration: S3_BUCKET is required when STORAGE_DRIVER is s3');
  });

  it('stops on an unknown driver, and on one S3 credential without the other (never showing the secret)', () => {
    expect(fails({ STORAGE_DRIVER: 'ftp' })).toMatch(/^Invalid configuration: STORAGE_DRIVER /);
    expect(fails({ S3_SECRET_ACCESS_KEY: 'very-secret' })).toMatch(/S3_ACCESS_KEY_ID is required/);
    const message = fails({ S3_ACCESS_KEY_ID: 'id' });
    expect(message).toMatch(/S3_SECRET_ACCESS_KEY is required/);
    expect(fails({ S3_ENDPOINT: 'not a url' })).toMatch(/S3_ENDPOINT/);
  });
});
