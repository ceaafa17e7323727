// Approval links: a paused execution (runner/blocks/approval.ts) answered by someone without an API
// key. The link names the execution and its pause and carries its expiry and an HMAC-SHA256 signature
// over the three, made with APPROVAL_LINK_SECRET (or, unset, a key derived from the encryption key),
// so it cannot be forged or stretched; it is single-use because a resume is (jobs/resume-execution.ts:
// once answered, the execution no longer waits on that pause). The same pause always gives the same
// link, so the Job record shows one URL however often it is read.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import { resolveEncryptionKey } from '../db/encryption-key.ts';
import type { StoredPause } from '../db/executions.ts';

/** Where the link's page is served (outside /api: no key). */
export const APPROVAL_PAGE_PATH = '/approve';

export type LinkCheck = 'ok' | 'expired' | 'forged';

export interface ApprovalLinks {
  /** The link of a pause: `/approve/{executionId}/{contextId}?expires=…&signature=…`. */
  url(executionId: string, pause: StoredPause): string;
  /** Whether a link's parts are genuine and unexpired at `now`. */
  check(executionId: string, contextId: string, expires: string, signature: string, now: Date): LinkCheck;
}

export function approvalLinks(config: Config): ApprovalLinks {
  let secret: Buffer | undefined;
  const key = () => {
    secret ??= config.APPROVAL_LINK_SECRET
      ? Buffer.from(config.APPROVAL_LINK_SECRET)
      : createHmac('sha256', resolveEncryptionKey(config)).update('approval-links').digest();
    return secret;
  };
  const sign = (executionId: string, contextId: string, expires: string) =>
    createHmac('sha256', key()).update(`${executionId}.${contextId}.${expires}`).digest('base64url');
  const ttlMs = config.APPROVAL_LINK_TTL_HOURS * 3_600_000;
  return {
    url(executionId, pause) {
      const lasts = Date.parse(pause.pausedAt) + ttlMs;
      const expires = String(pause.expiresAt ? Math.min(Date.parse(pause.expiresAt), lasts) : lasts);
      const signature = sign(executionId, pause.contextId, expires);
      return `${APPROVAL_PAGE_PATH}/${executionId}/${pause.contextId}?expires=${expires}&signature=${signature}`;
    },
    check(executionId, contextId, expires, signature, now) {
      if (!/^\d{1,15}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'forged';
      const expected = Buffer.from(sign(executionId, contextId, expires));
      if (!timingSafeEqual(expected, Buffer.from(signature))) return 'forged';
      return Number(expires) <= now.getTime() ? 'expired' : 'ok';
    },
  };
}
