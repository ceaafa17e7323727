// S3-compatible object storage (AWS S3, MinIO, R2, Ceph…): one bucket shared by every API
// process, so uploads and downloads may land on any of them. Uploads stream through lib-storage's
// multipart Upload, which holds at most queueSize parts of PART_BYTES in memory whatever the size.

import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ByteLimit, checkKey, ObjectMissingError, type StorageDriver } from './driver.ts';

export interface S3Options {
  /** Unset: AWS itself. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Unset: the SDK's default credential chain (environment, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `<endpoint>/<bucket>/<key>` rather than `<bucket>.<endpoint>/<key>`: what most S3 look-alikes serve. */
  forcePathStyle: boolean;
}

// S3's smallest part; two in flight while the next is read.
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

const isNotFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

export function s3Storage(options: S3Options): StorageDriver {
  const config: S3ClientConfig = {
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    // Checksums only where S3 demands them: many S3-compatible servers refuse the aws-chunked
    // bodies with trailing checksums that the SDK sends by default since 2025.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
  };
  const client = new S3Client(config);
  const Bucket = options.bucket;

  async function remove(key: string) {
    await client.send(new DeleteObjectCommand({ Bucket, Key: checkKey(key) }));
  }

  return {
    name: 's3',
    async put(key, body, { maxBytes }) {
      const limit = new ByteLimit(maxBytes);
      body.once('error', (err) => limit.destroy(err));
      const upload = new Upload({
        client,
        params: { Bucket, Key: checkKey(key), Body: body.pipe(limit) },
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        // A failed multipart upload is aborted, which discards the parts sent so far.
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (err) {
        body.destroy();
        limit.destroy();
        // Nothing should be there (a single PUT fails whole, a multipart upload was aborted);
        // a delete makes sure, and its own failure must not hide the reason.
        await remove(key).catch(() => {});
        throw err;
      }
      return { size: limit.bytes };
    },
    async get(key) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: checkKey(key) }));
        return { body: res.Body as Readable, size: Number(res.ContentLength ?? 0) };
      } catch (err) {
        if (isNotFound(err)) throw new ObjectMissingError(key);
        throw err;
      }
    },
    delete: remove,
    async exists(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: checkKey(key) }));
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    async close() {
      client.destroy();
    },
  };
}
