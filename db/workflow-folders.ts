// Which folder a workflow sits in: a workflow folder (db/folders.ts, kind workflow) of its own
// workspace, checked before a workflow is put there; the key on workflows.folder_id refuses one
// deleted since, with the same answer.
import { ServiceError } from '../errors.ts';
import type { Queryable } from './client.ts';
import { hasFolder } from './folders.ts';

// A 404, as for any id out of reach (another workspace's folder reads as missing), whose details name
// the field the id came from, since the request's own target (workspace or workflow) was found.
const noSuchFolder = () =>
  new ServiceError(404, 'Folder not found', {
    details: [
      { code: 'custom', path: ['folderId'], message: 'No workflow folder with this id in the workspace' },
    ],
  });

/** A 404 naming folderId unless the workspace has that workflow folder (a file folder does not count). */
export async function requireWorkflowFolder(db: Queryable, workspaceId: string, folderId: string) {
  if (!(await hasFolder(db, workspaceId, folderId, 'workflow'))) throw noSuchFolder();
}

/** Runs a write that sets a folder: a folder deleted since it was checked is the same 404 (its key refuses it). */
export async function inWorkflowFolder<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = err as { code?: string; constraint_name?: string; constraint?: string } | null;
    if (e?.code === '23503' && (e.constraint_name ?? e.constraint) === 'workflows_folder_fkey') {
      throw noSuchFolder();
    }
    throw err;
  }
}
