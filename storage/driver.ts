// What a storage driver does (keep the bytes of a file under a key), the keys the service makes,
// and the byte counter every driver puts between an upload and its sink, so an upload over its
// cap fails as it crosses it, not after it was kept whole.
import { randomUUID } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';

export interface StorageDriver {
  readonly name: 'local' | 's3';
  /**
   * Streams `body` into a new object at `key`. More than `maxBytes` fails with TooLargeError as the
   * limit is crossed; any failure leaves nothing stored under the key.
   */
  put(key: string, body: Readable, options: { maxBytes: number }): Promise<{ size: number }>;
  /** The object's bytes and size; ObjectMissingError when there is none. */
  get(key: string): Promise<{ body: Readable; size: number }>;
  /** Removes the object; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Releases connections (the S3 client's sockets). */
  close(): Promise<void>;
}

export class TooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`More than ${maxBytes} bytes`);
    this.name = 'TooLargeError';
    this.maxBytes = maxBytes;
  }
}

export class ObjectMissingError extends Error {
  constructor(key: string) {
    super(`No stored object at ${key}`);
    this.name = 'ObjectMissingError';
  }
}

// Segments of letters, digits and dashes: nothing a file system or URL reads as a path step.
const KEY = /^[A-Za-z0-9-]{1,64}(\/[A-Za-z0-9-]{1,64}){0,3}$/;

/** Refuses a key the service did not make, so no key can name a path outside the store. */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`Not a storage key: ${JSON.stringify(key)}`);
  return key;
}

/** A new key: `<workspaceId>/<uuid>`, or `pending/<uuid>` while the workspace is not known yet. */
export function newStorageKey(workspaceId: string | null): string {
  return checkKey(`${workspaceId ?? 'pending'}/${randomUUID()}`);
}

/** Passes bytes through while counting them; errors with TooLargeError on the byte past `maxBytes`. */
export class ByteLimit extends Transform {
  bytes = 0;
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super();
    this.maxBytes = maxBytes;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) done(new TooLargeError(this.maxBytes));
    else done(null, chunk);
  }
}
