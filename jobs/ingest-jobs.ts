// Puts documents on the ingestion queue (`knowledge-ingest`): the API's uploads and knowledge-base
// changes and the admin plane's re-processing send them here; runner/knowledge-jobs.ts works them.
import { randomUUID } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../db/client.ts';
import type { IngestJob } from '../db/knowledge/bases.ts';
import { sendInTransaction } from './boss.ts';
import { QUEUES } from './queues.ts';

/** Sends ingestion jobs in the caller's transaction: documents and their jobs commit together. */
export function sendIngestJobs(queue: PgBoss, tx: Queryable, jobs: IngestJob[]) {
  return sendInTransaction(
    queue,
    tx,
    QUEUES.knowledgeIngest,
    jobs.map((data) => ({ id: randomUUID(), data })),
  );
}
