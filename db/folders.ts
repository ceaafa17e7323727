// Folders: how a workspace's files are grouped as docs, and its workflows. A folder holds one kind
// (files or workflows, as the original service types its folders by resource), sits at the top of
// its workspace or under a parent of the same workspace and kind, with a name unique beside its
// siblings of that kind. Deleting one deletes its subfolders and moves what they held to the top.
import { z } from 'zod';
import { conflict, invalidField, isUniqueViolation, notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';

/** What a folder holds: files (docs) or workflows. */
export type FolderKind = 'file' | 'workflow';
export const FOLDER_KINDS = ['file', 'workflow'] as const;

export interface Folder {
  id: string;
  workspaceId: string;
  kind: FolderKind;
  parentId: string | null;
  name: string;
  createdBy: string | null;
  createdAt: string;
}

type FolderRow = {
  id: string;
  workspace_id: string;
  kind: FolderKind;
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
  kind: r.kind,
  parentId: r.parent_id,
  name: r.name,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
});

/**
 * Creates a folder (under `parentId`, which must be a folder of the same workspace and kind; files
 * by default); records folder.created.
 */
export async function createFolder(
  db: Queryable,
  actor: Actor,
  input: { workspaceId: string; name: string; parentId?: string | null; kind?: FolderKind },
): Promise<Folder> {
  const kind = input.kind ?? 'file';
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
      if (input.parentId) await requireFolder(tx, input.workspaceId, input.parentId, kind);
      const [row] = await tx.query<FolderRow>(
        `insert into folders (workspace_id, parent_id, name, created_by, kind)
         values ($1, $2, $3, $4, $5) returning *`,
        [input.workspaceId, input.parentId ?? null, name, actor.userId, kind],
      );
      const folder = toFolder(row as FolderRow);
      await recordAudit(tx, actor, {
        organizationId: ws.organization_id,
        workspaceId: input.workspaceId,
        action: 'folder.created',
        resourceType: 'folder',
        resourceId: folder.id,
        metadata: { name, kind, parentId: folder.parentId },
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

/**
 * Throws 404 unless the folder exists in that workspace and holds that kind (a folder of another
 * workspace, or one of the other kind, is not found).
 */
export async function requireFolder(
  db: Queryable,
  workspaceId: string,
  folderId: string,
  kind: FolderKind = 'file',
): Promise<void> {
  if (!(await hasFolder(db, workspaceId, folderId, kind))) throw notFound('Folder');
}

/** Whether the workspace has that folder, of that kind. */
export async function hasFolder(
  db: Queryable,
  workspaceId: string,
  folderId: string,
  kind: FolderKind,
): Promise<boolean> {
  const [row] = await db.query('select 1 from folders where id = $1 and workspace_id = $2 and kind = $3', [
    folderId,
    workspaceId,
    kind,
  ]);
  return row !== undefined;
}

/** A workspace's folders (of one kind, or all), by name within each parent. */
export async function listFolders(db: Queryable, workspaceId: string, kind?: FolderKind): Promise<Folder[]> {
  const rows = await db.query<FolderRow>(
    `select * from folders where workspace_id = $1 and ($2::text is null or kind = $2)
      order by kind, parent_id nulls first, name, id`,
    [workspaceId, kind ?? null],
  );
  return rows.map(toFolder);
}

/**
 * Deletes a folder and its subfolders; what they held stays and moves to the top of the workspace
 * (files keep their lifecycle, workflows stay deployed as they were: deleting a folder never stops
 * a running workflow). Records folder.deleted with the counts moved; 404 when there is no such folder.
 */
export async function deleteFolder(
  db: Queryable,
  actor: Actor,
  folderId: string,
): Promise<{ id: string; deletedFolders: number; movedFiles: number; movedWorkflows: number }> {
  return db.transaction(async (tx) => {
    const [folder] = await tx.query<FolderRow & { organization_id: string }>(
      `select f.*, s.organization_id from folders f join workspaces s on s.id = f.workspace_id
        where f.id = $1 for update of f`,
      [folderId],
    );
    if (!folder) throw notFound('Folder');
    // The folder and every folder under it, counted before the keys' own actions move their contents.
    const [counts] = await tx.query<{ folders: number; files: number; workflows: number }>(
      `with recursive tree as (
         select id from folders where id = $1
         union all select f.id from folders f join tree t on f.parent_id = t.id
       )
       select (select count(*)::int from tree) as folders,
              (select count(*)::int from files where folder_id in (select id from tree)) as files,
              (select count(*)::int from workflows where folder_id in (select id from tree)) as workflows`,
      [folderId],
    );
    await tx.query('delete from folders where id = $1', [folderId]);
    const done = {
      id: folderId,
      deletedFolders: counts?.folders ?? 1,
      movedFiles: counts?.files ?? 0,
      movedWorkflows: counts?.workflows ?? 0,
    };
    await recordAudit(tx, actor, {
      organizationId: folder.organization_id,
      workspaceId: folder.workspace_id,
      action: 'folder.deleted',
      resourceType: 'folder',
      resourceId: folderId,
      metadata: { name: folder.name, kind: folder.kind, ...done },
    });
    return done;
  });
}
