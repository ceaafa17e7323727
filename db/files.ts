// Files: the record of each file uploaded to a workspace (its bytes are in storage, under a key the
// service made), and the rules that keep them valid: a name unique in the workspace (archived
// files keep theirs), the storage quota of whoever the workspace is billed to, and a folder of the
// same workspace. Docs are the same files seen by folder and lifecycle scope. Archiving keeps a
// file's name and storage (it can be restored); deleting frees both.
import { z } from 'zod';
import { conflict, invalidField, isUniqueViolation, notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { isPlainName, requireFolder } from './folders.ts';
import { reserveStorage } from './storage-quota.ts';

/** The largest file: 100 MB, in binary megabytes as the spec's clients count them. */
export const MAX_FILE_BYTES = 104_857_600;

export const DOC_SCOPES = ['active', 'archived', 'all'] as const;
export type DocScope = (typeof DOC_SCOPES)[number];

/** A file as the API shows it. */
export interface FileRecord {
  id: string;
  name: string;
  size: number;
  /** Media type. */
  type: string;
  /** Storage key. */
  key: string;
  /** The user whose key uploaded it; null for a workspace key or the admin plane. */
  uploadedBy: string | null;
  uploadedAt: string;
  workspaceId: string;
  folderId: string | null;
  archivedAt: string | null;
}

type FileRow = {
  id: string;
  workspace_id: string;
  folder_id: string | null;
  name: string;
  size: number | string;
  media_type: string;
  storage_key: string;
  uploaded_by: string | null;
  uploaded_at: Date;
  archived_at: Date | null;
};

const toFile = (r: FileRow): FileRecord => ({
  id: r.id,
  name: r.name,
  size: Number(r.size),
  type: r.media_type,
  key: r.storage_key,
  uploadedBy: r.uploaded_by,
  uploadedAt: r.uploaded_at.toISOString(),
  workspaceId: r.workspace_id,
  folderId: r.folder_id,
  archivedAt: r.archived_at?.toISOString() ?? null,
});

/**
 * A file's name is data, never a path: slashes, `..` and any script are kept as given. Only what
 * cannot be shown or stored is refused: control characters (and so NUL), blank names.
 */
export const fileNameSchema = z
  .string()
  .min(1)
  .max(255)
  .refine(isPlainName, 'No control characters, not blank');

/** `type/subtype` as stored and served back in Content-Type: tokens only, lower case. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
export const isMediaType = (t: string) => MEDIA_TYPE.test(t);

/** Checks a file name, as a 400 naming the field. */
export function checkFileName(name: string): string {
  const r = fileNameSchema.safeParse(name);
  if (!r.success) throw invalidField('file', `File name: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

/**
 * The 409 for a name in use, naming the file that holds it and the way out: deleting it (an archived
 * file keeps its name, and does not show in the file list, hence the mention).
 */
const taken = (name: string, holder?: { id: string; archived: boolean }) =>
  conflict(
    holder
      ? `A file named "${name}" already exists in this workspace (id ${holder.id}${holder.archived ? ', archived' : ''}): ` +
          `delete it first with DELETE /api/v1/files/${holder.id}`
      : `A file named "${name}" already exists in this workspace`,
  );

/** The file that holds a name in the workspace (archived ones too), if any. */
async function nameHolder(db: Queryable, workspaceId: string, name: string) {
  const [row] = await db.query<{ id: string; archived_at: Date | null }>(
    'select id, archived_at from files where workspace_id = $1 and name = $2',
    [workspaceId, name],
  );
  return row ? { id: row.id, archived: row.archived_at !== null } : undefined;
}

/** 409 when the workspace holds a file of that name (archived ones too): a cheap early refusal. */
export async function assertFileNameFree(db: Queryable, workspaceId: string, name: string): Promise<void> {
  const holder = await nameHolder(db, workspaceId, name);
  if (holder) throw taken(name, holder);
}

export interface NewFile {
  workspaceId: string;
  name: string;
  size: number;
  mediaType: string;
  storageKey: string;
}

/**
 * Records a stored file. Under a lock on the subject the workspace is billed to, so racing uploads
 * cannot together pass its storage quota (413); the unique index refuses a second file of one
 * name (409), also when two race. Records file.uploaded.
 */
export async function createFile(db: Queryable, actor: Actor, input: NewFile): Promise<FileRecord> {
  const name = checkFileName(input.name);
  if (!isMediaType(input.mediaType)) throw new Error(`not a media type: ${input.mediaType}`);
  try {
    return await db.transaction(async (tx) => {
      const { organizationId } = await reserveStorage(tx, input.workspaceId, input.size, 'this file');
      const [row] = await tx.query<FileRow>(
        `insert into files (workspace_id, name, size, media_type, storage_key, uploaded_by)
         values ($1, $2, $3, $4, $5, $6) returning *`,
        [input.workspaceId, name, input.size, input.mediaType, input.storageKey, actor.userId],
      );
      const file = toFile(row as FileRow);
      await recordAudit(tx, actor, {
        organizationId,
        workspaceId: input.workspaceId,
        action: 'file.uploaded',
        resourceType: 'file',
        resourceId: file.id,
        metadata: { name, size: file.size, type: file.type },
      });
      return file;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'files_workspace_id_name_key')) {
      // The racing upload that won: read after the failed transaction, so it has committed.
      throw taken(name, await nameHolder(db, input.workspaceId, name).catch(() => undefined));
    }
    throw err;
  }
}

/** The file, or 404 when it is not in that workspace. */
export async function getFile(db: Queryable, ref: { id: string; workspaceId: string }): Promise<FileRecord> {
  const [row] = await db.query<FileRow>('select * from files where id = $1 and workspace_id = $2', [
    ref.id,
    ref.workspaceId,
  ]);
  if (!row) throw notFound('File');
  return toFile(row);
}

/** The workspace's live (not archived) files, newest first. */
export async function listFiles(db: Queryable, workspaceId: string): Promise<FileRecord[]> {
  const rows = await db.query<FileRow>(
    `select * from files where workspace_id = $1 and archived_at is null
      order by uploaded_at desc, id desc`,
    [workspaceId],
  );
  return rows.map(toFile);
}

const SCOPE_CLAUSE: Record<DocScope, string> = {
  active: 'archived_at is null',
  archived: 'archived_at is not null',
  all: 'true',
};

/** The workspace's docs in a scope, newest first; with a folder, only that folder's (404 when not in the workspace). */
export async function listDocs(
  db: Queryable,
  workspaceId: string,
  options: { folderId?: string; scope: DocScope },
): Promise<FileRecord[]> {
  const params: unknown[] = [workspaceId];
  let inFolder = '';
  if (options.folderId) {
    await requireFolder(db, workspaceId, options.folderId);
    params.push(options.folderId);
    inFolder = ' and folder_id = $2';
  }
  const rows = await db.query<FileRow>(
    `select * from files where workspace_id = $1${inFolder} and ${SCOPE_CLAUSE[options.scope]}
      order by uploaded_at desc, id desc`,
    params,
  );
  return rows.map(toFile);
}

/** Loads a file with its organization and locks its row, for a change. */
async function lockFile(tx: Queryable, fileId: string) {
  const [row] = await tx.query<FileRow & { organization_id: string }>(
    `select f.*, w.organization_id from files f join workspaces w on w.id = f.workspace_id
      where f.id = $1 for update of f`,
    [fileId],
  );
  if (!row) throw notFound('File');
  return row;
}

/** Moves a file into a folder of its workspace, or (null) to the top; records file.moved. */
export async function moveFile(
  db: Queryable,
  actor: Actor,
  fileId: string,
  folderId: string | null,
): Promise<FileRecord> {
  return db.transaction(async (tx) => {
    const file = await lockFile(tx, fileId);
    if (folderId) await requireFolder(tx, file.workspace_id, folderId);
    if (file.folder_id === folderId) return toFile(file);
    const [row] = await tx.query<FileRow>('update files set folder_id = $2 where id = $1 returning *', [
      fileId,
      folderId,
    ]);
    await recordAudit(tx, actor, {
      organizationId: file.organization_id,
      workspaceId: file.workspace_id,
      action: 'file.moved',
      resourceType: 'file',
      resourceId: fileId,
      metadata: { name: file.name, from: file.folder_id, to: folderId },
    });
    return toFile(row as FileRow);
  });
}

/**
 * Archives a file (it leaves the file list and the active docs, keeps its name and its storage) or
 * restores it; records file.archived or file.restored. Asking for the state a file is in changes nothing.
 */
export async function setFileArchived(
  db: Queryable,
  actor: Actor,
  fileId: string,
  archived: boolean,
): Promise<FileRecord> {
  return db.transaction(async (tx) => {
    const file = await lockFile(tx, fileId);
    if ((file.archived_at !== null) === archived) return toFile(file);
    const [row] = await tx.query<FileRow>(
      `update files set archived_at = ${archived ? 'now()' : 'null'} where id = $1 returning *`,
      [fileId],
    );
    await recordAudit(tx, actor, {
      organizationId: file.organization_id,
      workspaceId: file.workspace_id,
      action: archived ? 'file.archived' : 'file.restored',
      resourceType: 'file',
      resourceId: fileId,
      metadata: { name: file.name },
    });
    return toFile(row as FileRow);
  });
}

/**
 * Deletes a file of the workspace (archived or not; 404 when not in it): its name is free again and
 * its bytes no longer count against the storage quota. Answers the deleted file, whose bytes the
 * caller removes from storage once this has committed. Records file.deleted.
 */
export async function deleteFile(
  db: Queryable,
  actor: Actor,
  ref: { id: string; workspaceId: string },
): Promise<FileRecord> {
  return db.transaction(async (tx) => {
    const file = await lockFile(tx, ref.id);
    if (file.workspace_id !== ref.workspaceId) throw notFound('File');
    await tx.query('delete from files where id = $1', [ref.id]);
    const deleted = toFile(file);
    await recordAudit(tx, actor, {
      organizationId: file.organization_id,
      workspaceId: file.workspace_id,
      action: 'file.deleted',
      resourceType: 'file',
      resourceId: deleted.id,
      metadata: {
        name: deleted.name,
        size: deleted.size,
        type: deleted.type,
        archived: file.archived_at !== null,
      },
    });
    return deleted;
  });
}
