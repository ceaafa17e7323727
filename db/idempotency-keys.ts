// Idempotency-Key records (migration 0007): the SQL of a key's life. A request claims its key
// (pending, under a lease that its request renews while it runs); its answer then completes the
// record, or the claim is released (deleted) so that a retry does the work. A pending claim whose
// lease ran out (its process died) and a record past its expiry are taken over by the next claim;
// purge removes expired records in bulk. Times come from the caller's clock, so tests move them.
import type { Queryable } from './client.ts';

/** A key value of one caller (API key). */
export interface IdempotencyScope {
  apiKeyId: string;
  key: string;
}

/** The request a key was first used for. */
export interface IdempotentRequest {
  method: string;
  path: string;
}

/** What the request hashed to: SHA-256 of its body and the bytes hashed; null when not read whole. */
export interface BodyFingerprint {
  sha256: Buffer;
  length: number;
}

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  /** Null when it was not kept (over the size kept for replays, or not JSON). */
  body: Uint8Array | null;
  /** The size of the body, when known. */
  bodySize: number | null;
}

export interface IdempotencyRecord extends IdempotentRequest {
  state: 'pending' | 'completed';
  fingerprint: BodyFingerprint | null;
  /** Null while pending. */
  answer: StoredAnswer | null;
  createdAt: Date;
}

/** A claim taken (with the token that completes or releases it), or the record that holds the key. */
export type Claim = { claimed: true; token: string } | { claimed: false; record: IdempotencyRecord };

type ClaimRow = {
  claimed_token: string | null;
  state: 'pending' | 'completed' | null;
  method: string;
  path: string;
  body_sha256: Uint8Array | null;
  body_length: number | null;
  status: number | null;
  headers: Record<string, string> | null;
  body: Uint8Array | null;
  body_size: number | null;
  created_at: Date;
};

/** One claim asked for: the caller's key, the request, and the times from the service's clock. */
export interface ClaimAsk {
  scope: IdempotencyScope;
  request: IdempotentRequest;
  times: { now: Date; leaseUntil: Date; expiresAt: Date };
}

/**
 * Claims keys for requests, in one statement for however many arrived together (each claim is a
 * commit, and commits are what a keyed request pays for): each is inserted as a pending record, or
 * takes over one that has expired or whose lease ran out; otherwise the record that holds the key is
 * answered. Null for a key claimed by a request whose record this statement could not see (it
 * committed while this one ran, or it came twice in the batch): the caller asks again.
 */
export async function claimIdempotencyKeys(db: Queryable, asks: ClaimAsk[]): Promise<(Claim | null)[]> {
  // A key twice in one statement would be updated twice by its ON CONFLICT: a repeat is answered
  // with what its first ask finds (the key claimed by that ask is in flight for the repeat).
  const firsts = new Map<string, ClaimAsk>();
  const sent: ClaimAsk[] = [];
  for (const ask of asks) {
    const id = `${ask.scope.apiKeyId} ${ask.scope.key}`;
    if (!firsts.has(id)) {
      firsts.set(id, ask);
      sent.push(ask);
    }
  }
  const tokens = sent.map(() => crypto.randomUUID());
  const col = <T>(f: (a: ClaimAsk) => T) => sent.map(f);
  const rows = await db.query<ClaimRow & { ord: number }>(
    `with asked as (
       select * from unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[],
                            $6::timestamptz[], $7::timestamptz[], $8::timestamptz[])
              with ordinality as t(api_key_id, key, token, method, path, now, lease_until, expires_at, ord)
     ), claimed as (
       insert into idempotency_keys as k
              (api_key_id, key, state, claim_token, lease_until, method, path, created_at, expires_at)
       select api_key_id, key, 'pending', token, lease_until, method, path, now, expires_at from asked
       on conflict (api_key_id, key) do update
          set state = 'pending', claim_token = excluded.claim_token, lease_until = excluded.lease_until,
              method = excluded.method, path = excluded.path, created_at = excluded.created_at,
              expires_at = excluded.expires_at, body_sha256 = null, body_length = null, status = null,
              headers = null, body = null, body_size = null
        where k.expires_at <= excluded.created_at
           or (k.state = 'pending' and k.lease_until <= excluded.created_at)
       returning k.claim_token
     )
     select a.ord::int as ord, c.claim_token as claimed_token, k.state, k.method, k.path, k.body_sha256,
            k.body_length, k.status, k.headers, k.body, k.body_size, k.created_at
       from asked a
       left join claimed c on c.claim_token = a.token
       left join idempotency_keys k on c.claim_token is null and k.api_key_id = a.api_key_id and k.key = a.key`,
    [
      col((a) => a.scope.apiKeyId),
      col((a) => a.scope.key),
      tokens,
      col((a) => a.request.method),
      col((a) => a.request.path),
      // As text: postgres.js does not carry an array of Dates as timestamptz[].
      col((a) => a.times.now.toISOString()),
      col((a) => a.times.leaseUntil.toISOString()),
      col((a) => a.times.expiresAt.toISOString()),
    ],
  );
  const byAsk = new Map(rows.map((r) => [sent[r.ord - 1] as ClaimAsk, claimOf(r)]));
  return asks.map((ask) => {
    const first = firsts.get(`${ask.scope.apiKeyId} ${ask.scope.key}`) as ClaimAsk;
    const found = byAsk.get(first) ?? null;
    if (ask === first || !found?.claimed) return found;
    const { method, path } = first.request;
    return {
      claimed: false,
      record: { state: 'pending', method, path, fingerprint: null, answer: null, createdAt: first.times.now },
    };
  });
}

function claimOf(row: ClaimRow): Claim | null {
  if (row.claimed_token) return { claimed: true, token: row.claimed_token };
  if (!row.state) return null;
  return {
    claimed: false,
    record: {
      state: row.state,
      method: row.method,
      path: row.path,
      fingerprint:
        row.body_sha256 && row.body_length !== null
          ? { sha256: Buffer.from(row.body_sha256), length: Number(row.body_length) }
          : null,
      answer:
        row.state === 'completed' && row.status !== null
          ? {
              status: row.status,
              headers: row.headers ?? {},
              body: row.body,
              bodySize: row.body_size === null ? null : Number(row.body_size),
            }
          : null,
      createdAt: row.created_at,
    },
  };
}

/** Extends a claim's lease while its request runs; false when the claim is no longer this token's. */
export async function renewIdempotencyClaim(
  db: Queryable,
  scope: IdempotencyScope,
  token: string,
  leaseUntil: Date,
): Promise<boolean> {
  const rows = await db.query(
    `update idempotency_keys set lease_until = $4
      where api_key_id = $1 and key = $2 and claim_token = $3 and state = 'pending' returning 1`,
    [scope.apiKeyId, scope.key, token, leaseUntil],
  );
  return rows.length > 0;
}

/** The answer of a claim's request, to be stored for replays. */
export interface Completion {
  scope: IdempotencyScope;
  token: string;
  fingerprint: BodyFingerprint | null;
  answer: StoredAnswer;
}

/**
 * Stores the answers of claims' requests, in one statement for however many finished together;
 * false for a claim that is no longer its token's (its lease ran out and another request took the
 * key over). Bytes travel as hex: arrays of bytea are not carried alike by both drivers.
 */
export async function completeIdempotencyKeys(db: Queryable, done: Completion[]): Promise<boolean[]> {
  const col = <T>(f: (d: Completion) => T) => done.map(f);
  const hex = (b: Uint8Array | null | undefined) =>
    b ? Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex') : null;
  const rows = await db.query<{ claim_token: string }>(
    `update idempotency_keys k
        set state = 'completed', body_sha256 = decode(u.sha256, 'hex'), body_length = u.body_length,
            status = u.status, headers = u.headers::jsonb, body = decode(u.body, 'hex'), body_size = u.body_size
       from unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::bigint[], $6::smallint[], $7::text[],
                   $8::text[], $9::bigint[])
            as u(api_key_id, key, token, sha256, body_length, status, headers, body, body_size)
      where k.api_key_id = u.api_key_id and k.key = u.key and k.claim_token = u.token and k.state = 'pending'
      returning k.claim_token`,
    [
      col((d) => d.scope.apiKeyId),
      col((d) => d.scope.key),
      col((d) => d.token),
      col((d) => hex(d.fingerprint?.sha256)),
      col((d) => d.fingerprint?.length ?? null),
      col((d) => d.answer.status),
      col((d) => JSON.stringify(d.answer.headers)),
      col((d) => hex(d.answer.body)),
      col((d) => d.answer.bodySize),
    ],
  );
  const stored = new Set(rows.map((r) => r.claim_token));
  return done.map((d) => stored.has(d.token));
}

/** Deletes a pending claim, so the next request with the key does the work. */
export async function releaseIdempotencyKey(
  db: Queryable,
  scope: IdempotencyScope,
  token: string,
): Promise<void> {
  await db.query(
    `delete from idempotency_keys
      where api_key_id = $1 and key = $2 and claim_token = $3 and state = 'pending'`,
    [scope.apiKeyId, scope.key, token],
  );
}

/** Deletes the records expired at `now`; answers how many. */
export async function purgeIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `with purged as (delete from idempotency_keys where expires_at <= $1 returning 1)
     select count(*)::int as n from purged`,
    [now],
  );
  return row?.n ?? 0;
}
