// What the knowledge benches share (bench/knowledge.ts, bench/knowledge-quality.ts): a scratch
// service with a runner and the API in this process, a document as the multipart upload the API
// takes, and the wait until a knowledge base's documents are processed.
import { randomUUID } from 'node:crypto';
import { startApi } from '../../api/start.ts';
import type { Db } from '../../db/client.ts';
import { createLogger } from '../../logger.ts';
import { startRunner } from '../../runner/runner.ts';
import { startScratchService } from './scratch-service.ts';

/** A scratch service (bench/lib/scratch-service.ts) whose runner and API run in this process. */
export async function startIngestingService(env: Record<string, string> = {}) {
  const svc = await startScratchService(env);
  const log = createLogger('error');
  const runner = await startRunner({
    db: svc.db,
    config: svc.config,
    log,
    encryptionKey: svc.config.ENCRYPTION_KEY as Buffer,
  });
  const api = await startApi({ db: svc.db, config: svc.config, log, queue: runner.boss });
  const close = async () => {
    await api.close();
    await runner.stop();
    await svc.dispose();
  };
  return { svc, api, close };
}

/** A document upload's body: the workspace id and the file, as `POST …/documents` takes them. */
export function documentUpload(workspaceId: string, name: string, content: string, type = 'text/plain') {
  const boundary = `----bench${randomUUID()}`;
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${workspaceId}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
    `Content-Type: ${type}\r\n\r\n${content}\r\n--${boundary}--\r\n`;
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Resolves once none of the base's documents is pending or processing; throws if one failed. */
export async function waitAllSettled(db: Db, knowledgeBaseId: string) {
  for (;;) {
    const [row] = await db.query<{ open: number | string; failed: number | string }>(
      `select count(*) filter (where processing_status in ('pending', 'processing')) as open,
              count(*) filter (where processing_status = 'failed') as failed
         from knowledge_documents where knowledge_base_id = $1`,
      [knowledgeBaseId],
    );
    if (Number(row?.failed)) throw new Error('a document failed to process');
    if (!Number(row?.open)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}
