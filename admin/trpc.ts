// tRPC set-up of the admin plane: its context, and the procedure every router builds on, which turns
// the service's ServiceError into the matching tRPC error (details travel in the error's data).
import { initTRPC, TRPCError } from '@trpc/server';
import type { PgBoss } from 'pg-boss';
import { ZodError } from 'zod';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { unstorableIssue } from '../db/unstorable.ts';
import { type FieldIssue, issuesOf, ServiceError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Embedders } from '../runner/embeddings/embedder.ts';
import type { StorageDriver } from '../storage/driver.ts';
import '../zod-messages.ts';

export interface AdminContext {
  db: Db;
  config: Config;
  log: Logger;
  /** The AES-256 key that seals API keys and secrets. */
  encryptionKey: Buffer;
  /** Sends jobs to the runners (documents to process again). */
  queue: PgBoss;
  /** Where uploaded bytes are kept: removed with their records. */
  storage: StorageDriver;
  embedders: Embedders;
}

const CODES: Record<number, TRPCError['code']> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/** What a procedure says about itself: `npm run admin -- help` lists each with its description. */
export interface AdminMeta {
  /** One line: what the procedure does. */
  description: string;
}

const builder = initTRPC.context<AdminContext>().meta<AdminMeta>();
const t = builder.create({
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const details: FieldIssue[] | undefined =
      cause instanceof ServiceError ? cause.details : cause instanceof ZodError ? issuesOf(cause) : undefined;
    // Internal errors keep their message server-side; the client sees only that one happened.
    const message =
      error.code === 'INTERNAL_SERVER_ERROR'
        ? 'Internal server error'
        : cause instanceof ZodError
          ? 'Invalid input'
          : shape.message;
    return { ...shape, message, data: { ...shape.data, stack: undefined, ...(details ? { details } : {}) } };
  },
});

const mapServiceErrors = t.middleware(async ({ next, ctx, path }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof ServiceError) {
      throw new TRPCError({ code: CODES[cause.status] ?? 'BAD_REQUEST', message: cause.message, cause });
    }
    if (result.error.code === 'INTERNAL_SERVER_ERROR')
      ctx.log.error('admin procedure failed', { path, err: cause });
  }
  return result;
});

// Text Postgres cannot store (NUL, unpaired surrogates) and JSON nested too deep are refused before
// any procedure sees them, as the public API refuses them in every body and query, rather than
// failing in a store as a 500.
const refuseUnstorableText = t.middleware(async ({ next, getRawInput }) => {
  const issue = unstorableIssue(await getRawInput());
  if (issue) {
    const cause = new ServiceError(400, 'Invalid input', { details: [issue] });
    throw new TRPCError({ code: 'BAD_REQUEST', message: cause.message, cause });
  }
  return next();
});

export const router = t.router;
export const procedure = t.procedure.use(mapServiceErrors).use(refuseUnstorableText);
