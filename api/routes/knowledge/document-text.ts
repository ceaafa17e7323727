// A document sent as text: POST /api/v1/knowledge/{id}/documents with a JSON body
// `{workspaceId, name, text}` beside the multipart upload. The text is stored as the document's
// bytes (UTF-8) and goes through the very same ingestion, storage quota and duplicate rules: only
// how the bytes arrive differs. The name's extension picks the kind among the text kinds (txt, md,
// csv, json, html; none or another is plain text); a binary kind (pdf, docx) is refused.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { z } from 'zod';
import { authorizeResource } from '../../../db/access.ts';
import { fileNameSchema } from '../../../db/files.ts';
import { requireKnowledgeBase } from '../../../db/knowledge/bases.ts';
import { createDocument } from '../../../db/knowledge/documents.ts';
import { isStorableText } from '../../../db/tables/values.ts';
import { invalidField } from '../../../errors.ts';
import { sendIngestJobs } from '../../../jobs/ingest-jobs.ts';
import { documentKindOf, documentMediaType } from '../../../runner/ingestion/document-types.ts';
import type { StorageDriver } from '../../../storage/driver.ts';
import { newStorageKey } from '../../../storage/driver.ts';
import type { ApiDeps, ApiEnv } from '../../context.ts';
import { jsonBody } from '../../middleware/validate.ts';
import { EX } from '../../openapi/components.ts';
import { WORKSPACE } from './schemas.ts';

const TEXT_KINDS: ReadonlySet<string> = new Set(['txt', 'md', 'csv', 'json', 'html']);

export const textDocumentBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    name: fileNameSchema.meta({
      description:
        'The document’s file name; its extension picks the kind: .md, .csv, .json, .html, else plain text',
      example: 'faq.md',
    }),
    text: z
      .string()
      .min(1)
      .refine(isStorableText, 'Not storable text (no NUL)')
      .meta({ description: 'The content, within the 10 MB request body', example: '# FAQ\n\nAsk HR.' }),
    allowDuplicate: z.boolean().default(false).meta({
      description: 'As the upload’s field: `true` accepts content the knowledge base already holds',
    }),
  })
  .meta({ id: 'KnowledgeTextDocument' });

export const textDocumentRequest = { workspaceId: EX.workspaceId, name: 'faq.md', text: '# FAQ\n\nAsk HR.' };

/** Stores the text and records the document, pending, as an upload of the same bytes would be. */
export async function createTextDocument(
  c: Context<ApiEnv>,
  deps: ApiDeps & { storage: StorageDriver },
  knowledgeBaseId: string,
) {
  const { db, log, queue, storage } = deps;
  const body = await jsonBody(c, textDocumentBody);
  const access = await authorizeResource(db, c.get('principal'), body.workspaceId, 'write', 'Knowledge base');
  const workspaceId = access.workspace.id;
  await requireKnowledgeBase(db, { id: knowledgeBaseId, workspaceId });
  const kind = documentKindOf(body.name, 'text/plain');
  if (!kind || !TEXT_KINDS.has(kind)) {
    throw invalidField('name', `A .${kind} document cannot be sent as text: upload the file instead`);
  }
  const bytes = Buffer.from(body.text, 'utf8');
  const key = newStorageKey(workspaceId);
  await storage.put(key, Readable.from([bytes]), { maxBytes: bytes.length });
  try {
    const { document } = await db.transaction(async (tx) => {
      const created = await createDocument(tx, access.actor, {
        knowledgeBaseId,
        workspaceId,
        filename: body.name,
        fileSize: bytes.length,
        mimeType: documentMediaType(kind, 'application/octet-stream'),
        storageKey: key,
        contentSha256: createHash('sha256').update(bytes).digest('hex'),
        allowDuplicate: body.allowDuplicate,
      });
      await sendIngestJobs(queue, tx, [created.job]);
      return created;
    });
    return c.json({
      success: true,
      data: { document, message: `Document ${document.filename} created; processing has started` },
    });
  } catch (err) {
    await storage.delete(key).catch((cause: unknown) => {
      log.error('could not delete the bytes of a refused text document', { key, err: cause });
    });
    throw err;
  }
}
