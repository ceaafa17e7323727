// Folders: how a workspace's files are grouped as docs. A folder sits at the top of its workspace
// or under a parent folder of the same workspace, with a name unique beside its siblings.
import { z } from 'zod';
import { conflict, invalidField, isUniqueViolation, notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';

export interface Folder {
  id: string;
  workspaceId: string;
  parentId: string | null;
  name: string;
  createdBy: string | null;
  createdAt: string;
}

type FolderRow = {
  id: string;
  workspace_id: string;
  parent_id: string | null;
  name: string;
  created_by: string | null;
  created_at: Date;
};

/**
 * A name people give (a folder's, a file's): well-formed text without control characters (they
 * break listings and headers; NUL cannot be stored) and not blank.
 */
export const isPlainName = (s: string) => s.isWellFormed() && !/\p{Cc}/u.test(s) && s.trim() !== '';

export const folderNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine(isPlainName, 'No control characters');

const toFolder = (r: FolderRow): Folder => ({
  id: r.id,
  workspaceId: r.workspace_id,
  parentId: r.parent_id,
  name: r.name,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
});

/** Creates a folder (under `parentId`, which must be a folder of the same workspace); records folder.created. */
export async function createFolder(
  db: Queryable,
  actor: Actor,
  input: { workspaceId: string; name: string; parentId?: string | null },
): Promise<Folder> {
  const parsed = folderNameSchema.safeParse(input.name);
  if (!parsed.success) throw invalidField('name', parsed.error.issues[0]?.message ?? 'Invalid name');
  const name = parsed.data;
  try {
    return await db.transaction(async (tx) => {
      const [ws] = await tx.query<{ organization_id: string }>(
        'select organization_id from workspaces where id = $1',
        [input.workspaceId],
      );
      if (!ws) throw notFound('Workspace');
      if (input.parentId) await requireFolder(tx, input.workspaceId, input.parentId);
      const [row] = await tx.query<FolderRow>(
        `insert into folders (workspace_id, parent_id, name, created_by) values ($1, $2, $3, $4) returning *`,
        [input.workspaceId, input.parentId ?? null, name, actor.userId],
      );
      const folder = toFolder(row as FolderRow);
      await recordAudit(tx, actor, {
        organizationId: ws.organization_id,
        workspaceId: input.workspaceId,
        action: 'folder.created',
        resourceType: 'folder',
        resourceId: folder.id,
        metadata: { name, parentId: folder.parentId },
      });
      return folder;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'folders_workspace_parent_name_key')) {
      throw conflict(`A folder named ${name} already exists ${input.parentId ? 'in that folder' : 'here'}`);
    }
    throw err;
  }
}

/** Throws 404 unless the folder exists in that workspace (a folder of another workspace is not found). */
export async function requireFolder(db: Queryable, workspaceId: string, folderId: string): Promise<void> {
  const [row] = await db.query('select 1 from folders where id = $1 and workspace_id = $2', [
    folderId,
    workspaceId,
  ]);
  if (!row) throw notFound('Folder');
}
