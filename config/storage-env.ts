// Where uploaded files are kept, and the S3-compatible server's settings.
import { z } from 'zod';
import { bool, whenUnset } from './kinds.ts';

export const storageEnv = {
  // Where uploaded files are kept: local disk under DATA_DIR, or an S3-compatible bucket shared
  // by several API processes.
  STORAGE_DRIVER: z
    .enum(['local', 's3'])
    .default('local')
    .describe('Where uploaded files go: `local` (under `DATA_DIR/files`) or `s3`'),
  S3_ENDPOINT: z
    .url()
    .optional()
    .describe('URL of an S3-compatible server (MinIO, R2, Ceph…)')
    .meta(whenUnset('AWS')),
  S3_REGION: z.string().min(1).default('us-east-1').describe('Region of the bucket'),
  S3_BUCKET: z.string().min(1).optional().describe('Bucket of the files; required with `STORAGE_DRIVER=s3`'),
  S3_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .describe('Access key; set with `S3_SECRET_ACCESS_KEY`, or neither (environment, instance role)')
    .meta(whenUnset('SDK default chain')),
  S3_SECRET_ACCESS_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('Secret of that access key')
    .meta(whenUnset('SDK default chain')),
  S3_FORCE_PATH_STYLE: bool
    .default(true)
    .describe(
      '`<endpoint>/<bucket>/<key>` URLs, as most S3-compatible servers want; `false` for virtual hosts',
    ),
};
