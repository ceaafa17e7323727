// A small S3-compatible server for tests, in memory, path-style URLs (`/<bucket>/<key>`): PutObject,
// the multipart upload calls (create, upload part, complete, abort), GetObject, HeadObject and
// DeleteObject; enough for the storage driver and lib-storage. Signatures are not verified. It
// keeps S3's rules a client could break: parts of 5 MiB at least but the last, a completed list
// naming parts that were uploaded with their ETags in ascending order, and a body as long as its
// Content-Length. It refuses what it does not implement (aws-chunked bodies) rather than store it.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MIN_PART_BYTES = 5 * 1024 * 1024;

export interface S3TestServer {
  url: string;
  bucket: string;
  /** Stored objects by key. */
  objects: Map<string, Buffer>;
  /** Multipart uploads begun and neither completed nor aborted. */
  openUploads(): number;
  /** Every request's operation, in order (PutObject, UploadPart…). */
  operations: string[];
  close(): Promise<void>;
}

interface MultipartUpload {
  key: string;
  parts: Map<number, { etag: string; data: Buffer }>;
}

const etagOf = (data: Buffer) => `"${createHash('md5').update(data).digest('hex')}"`;
const xmlEscape = (s: string) =>
  s.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );

class S3Error extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) !== body.length) {
    throw new S3Error(400, 'IncompleteBody', 'The body is shorter or longer than its Content-Length');
  }
  return body;
}

function xml(res: ServerResponse, status: number, root: string, fields: Record<string, string>) {
  const inner = Object.entries(fields)
    .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
    .join('');
  res.writeHead(status, { 'Content-Type': 'application/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</${root}>`,
  );
}

export async function startS3Server(bucket = 'test-bucket'): Promise<S3TestServer> {
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, MultipartUpload>();
  const operations: string[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://s3.test');
    const [, bucketName, ...rest] = url.pathname.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    if (bucketName !== bucket) throw new S3Error(404, 'NoSuchBucket', 'The bucket does not exist');
    if (!key) throw new S3Error(501, 'NotImplemented', 'Bucket-level operations are not implemented');
    const encoding = String(req.headers['content-encoding'] ?? '');
    const sha = String(req.headers['x-amz-content-sha256'] ?? '');
    if (encoding.includes('aws-chunked') || sha.startsWith('STREAMING-')) {
      throw new S3Error(501, 'NotImplemented', 'aws-chunked bodies are not implemented');
    }
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const uploadOf = (id: string | null) => {
      const upload = id ? uploads.get(id) : undefined;
      if (!upload || upload.key !== key) throw new S3Error(404, 'NoSuchUpload', 'No such upload');
      return upload;
    };

    if (method === 'POST' && q.has('uploads')) {
      operations.push('CreateMultipartUpload');
      const id = randomUUID();
      uploads.set(id, { key, parts: new Map() });
      return xml(res, 200, 'InitiateMultipartUploadResult', { Bucket: bucket, Key: key, UploadId: id });
    }
    if (method === 'PUT' && q.has('uploadId')) {
      operations.push('UploadPart');
      const upload = uploadOf(q.get('uploadId'));
      const n = Number(q.get('partNumber'));
      if (!Number.isInteger(n) || n < 1 || n > 10_000)
        throw new S3Error(400, 'InvalidArgument', 'Bad part number');
      const data = await readBody(req);
      const etag = etagOf(data);
      upload.parts.set(n, { etag, data });
      res.writeHead(200, { ETag: etag }).end();
      return;
    }
    if (method === 'POST' && q.has('uploadId')) {
      operations.push('CompleteMultipartUpload');
      const id = q.get('uploadId') as string;
      const upload = uploadOf(id);
      const listed = [
        ...(await readBody(req))
          .toString('utf8')
          .matchAll(
            /<Part>\s*(?:<ETag>(.*?)<\/ETag>\s*<PartNumber>(\d+)<\/PartNumber>|<PartNumber>(\d+)<\/PartNumber>\s*<ETag>(.*?)<\/ETag>)/g,
          ),
      ].map((m) => ({
        n: Number(m[2] ?? m[3]),
        etag: (m[1] ?? m[4] ?? '').replace(/&quot;/g, '"'),
      }));
      if (!listed.length) throw new S3Error(400, 'MalformedXML', 'No parts listed');
      const pieces: Buffer[] = [];
      listed.forEach(({ n, etag }, i) => {
        const part = upload.parts.get(n);
        if (!part || part.etag !== etag) throw new S3Error(400, 'InvalidPart', `Part ${n} was not uploaded`);
        if (i > 0 && n <= (listed[i - 1] as { n: number }).n)
          throw new S3Error(400, 'InvalidPartOrder', 'Parts must be listed in ascending order');
        if (i < listed.length - 1 && part.data.length < MIN_PART_BYTES)
          throw new S3Error(400, 'EntityTooSmall', `Part ${n} is under 5 MiB`);
        pieces.push(part.data);
      });
      const data = Buffer.concat(pieces);
      objects.set(key, data);
      uploads.delete(id);
      return xml(res, 200, 'CompleteMultipartUploadResult', {
        Location: `/${bucket}/${key}`,
        Bucket: bucket,
        Key: key,
        ETag: `"${createHash('md5').update(data).digest('hex')}-${listed.length}"`,
      });
    }
    if (method === 'DELETE' && q.has('uploadId')) {
      operations.push('AbortMultipartUpload');
      uploadOf(q.get('uploadId'));
      uploads.delete(q.get('uploadId') as string);
      res.writeHead(204).end();
      return;
    }
    if (method === 'PUT') {
      operations.push('PutObject');
      const data = await readBody(req);
      objects.set(key, data);
      res.writeHead(200, { ETag: etagOf(data) }).end();
      return;
    }
    if (method === 'GET' || method === 'HEAD') {
      operations.push(method === 'GET' ? 'GetObject' : 'HeadObject');
      const data = objects.get(key);
      if (!data) {
        if (method === 'HEAD') return void res.writeHead(404).end();
        throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
      }
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(data.length),
        ETag: etagOf(data),
        'Last-Modified': new Date().toUTCString(),
      });
      res.end(method === 'GET' ? data : undefined);
      return;
    }
    if (method === 'DELETE') {
      operations.push('DeleteObject');
      objects.delete(key);
      res.writeHead(204).end();
      return;
    }
    throw new S3Error(405, 'MethodNotAllowed', `${method} is not implemented`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e = err instanceof S3Error ? err : new S3Error(500, 'InternalError', String(err));
      if (res.headersSent) return void res.destroy();
      // Whatever the client still sends is read and dropped, so it can read the answer.
      req.resume();
      xml(res, e.status, 'Error', { Code: e.code, Message: e.message, RequestId: randomUUID() });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    objects,
    openUploads: () => uploads.size,
    operations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
