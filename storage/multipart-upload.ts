// Receives a multipart/form-data upload: its text fields, and its one file part streamed straight
// into a storage driver under a new key while it arrives, so memory stays bounded whatever the
// size. Fields may come before or after the file. On any failure (malformed body, a refusal by
// the caller's hook, the size cap) nothing stays stored: the answer waits until partial data is gone.
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { ServiceError } from '../errors.ts';
import { newStorageKey, type StorageDriver, TooLargeError } from './driver.ts';
import { mediaTypeOf, SNIFF_BYTES } from './media-type.ts';

export interface ReceivedFile {
  key: string;
  size: number;
  /** The file name the part carried, as given (never used as a path). */
  name: string;
  /** Declared by the part, or sniffed from its first bytes. */
  type: string;
  /** The SHA-256 of the bytes, hex, computed as they streamed through. */
  sha256: string;
}

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: ReceivedFile;
}

export interface ReceiveOptions {
  storage: StorageDriver;
  maxBytes: number;
  /** The name of the file part. */
  fileField: string;
  /**
   * Called as the file part begins, with the fields read so far, the part's file name and its
   * declared media type (as sent, possibly empty); answers the workspace its key goes under (null
   * when not known yet). Throwing refuses the upload before a byte is stored.
   */
  onFile(fields: Record<string, string>, name: string, declaredType: string): Promise<string | null>;
}

const malformed = (message: string) => new ServiceError(400, message);

/**
 * Keeps a copy of the first bytes that pass, for sniffing, and hashes them all; passes everything
 * on unchanged.
 */
class Head extends Transform {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private readonly hash = createHash('sha256');
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.hash.update(chunk);
    if (this.bytes < SNIFF_BYTES) {
      const part = Buffer.from(chunk.subarray(0, SNIFF_BYTES - this.bytes));
      this.chunks.push(part);
      this.bytes += part.length;
    }
    done(null, chunk);
  }
  get head(): Buffer {
    return Buffer.concat(this.chunks);
  }
  /** The hash of every byte that passed; read once, after the stream has ended. */
  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Parses the body, storing its file part. Resolves once the whole body is read and the file is
 * stored; the caller then owns the stored object (and deletes it if it cannot keep it).
 */
export function receiveUpload(
  body: ReadableStream<Uint8Array> | null,
  contentType: string | undefined,
  options: ReceiveOptions,
): Promise<ReceivedUpload> {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) {
    return Promise.reject(malformed('Send multipart/form-data with a file part and the workspaceId field'));
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // A file name is kept whole (slashes and all): it is a name, not a path.
      preservePath: true,
      // Browsers send UTF-8 file names in the plain filename parameter.
      defParamCharset: 'utf8',
      limits: { files: 1, fields: 20, parts: 21, fieldNameSize: 100, fieldSize: 1024, headerPairs: 20 },
    });
  } catch {
    return Promise.reject(malformed('Malformed multipart Content-Type: it needs a boundary'));
  }
  if (!body) return Promise.reject(malformed('The request has no body'));
  const input = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields: Record<string, string> = Object.create(null);
    let fileStream: Readable | null = null;
    let storing: Promise<ReceivedFile> | null = null;
    let failure: Error | null = null;
    // Once resolved, the stored object is the caller's: nothing here may delete it any more.
    let received = false;

    // Stops reading, stops the storing (the driver then removes partial data), deletes a stored
    // object, and only then answers the error.
    const fail = (err: Error) => {
      if (failure || received) return;
      failure = err;
      input.unpipe(parser);
      input.destroy();
      fileStream?.destroy(err);
      const stored = storing ?? Promise.resolve(null);
      stored
        .then(
          (file) => (file ? options.storage.delete(file.key) : undefined),
          () => undefined,
        )
        .catch(() => undefined)
        .finally(() => reject(err));
    };

    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) return fail(malformed(`Field ${name} is too long`));
      if (name in fields) return fail(malformed(`Give the ${name} field once`));
      fields[name] = value;
    });

    parser.on('file', (name, stream, info) => {
      if (name !== options.fileField || info.filename === undefined) {
        stream.resume();
        return fail(
          malformed(
            name !== options.fileField
              ? `The file part must be named ${options.fileField}`
              : 'The file part needs a file name',
          ),
        );
      }
      fileStream = stream;
      const filename = info.filename;
      // The part's errors (a cut-off body, a failure elsewhere) reach the driver through head; both
      // keep a listener from the start, since the driver may not be listening yet.
      const head = new Head();
      stream.on('error', (err) => head.destroy(err));
      head.on('error', () => {});
      storing = (async () => {
        const workspaceId = await options.onFile({ ...fields }, filename, info.mimeType ?? '');
        if (failure) throw failure;
        const key = newStorageKey(workspaceId);
        const { size } = await options.storage.put(key, stream.pipe(head), { maxBytes: options.maxBytes });
        return {
          key,
          size,
          name: filename,
          type: await mediaTypeOf(info.mimeType, head.head),
          sha256: head.digest(),
        };
      })();
      storing.catch((err: unknown) => {
        fail(
          err instanceof TooLargeError
            ? new ServiceError(413, `File over the size limit of ${err.maxBytes} bytes`)
            : (err as Error),
        );
      });
    });

    parser.on('filesLimit', () => fail(malformed('Send one file part')));
    parser.on('fieldsLimit', () => fail(malformed('Too many fields')));
    parser.on('partsLimit', () => fail(malformed('Too many parts')));
    parser.on('error', (err: Error) => fail(malformed(`Malformed multipart body: ${err.message}`)));
    input.on('error', () => fail(malformed('The request body was cut off')));

    parser.on('close', () => {
      if (failure) return;
      if (!storing) return fail(malformed(`The ${options.fileField} part is missing`));
      storing.then(
        (file) => {
          if (failure) return;
          received = true;
          resolve({ fields: { ...fields }, file });
        },
        () => {},
      );
    });

    input.pipe(parser);
  });
}
