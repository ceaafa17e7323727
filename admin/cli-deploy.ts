// The CLI's `deploy` shortcut: a workflow file (JSON or YAML) becomes a deployed version in one
// step. The file holds a definition (with `name` and `description` beside its blocks, if you like),
// or `{name, description, definition}`; a workflow of that name in the workspace is updated,
// otherwise one is created; then it is deployed. The answer, printed as JSON, starts with its `id`.
import { readFileSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { parse } from 'yaml';
import type { AdminClient } from './client.ts';

export class UsageError extends Error {}

export async function deployFile(client: AdminClient, file: string, workspaceId: string, name?: string) {
  let text: string;
  try {
    // `npm run` starts the CLI in the package's directory; a relative path means where npm was run.
    text = readFileSync(resolve(process.env.INIT_CWD ?? process.cwd(), file), 'utf8');
  } catch (e) {
    throw new UsageError(`Cannot read ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    doc = parse(text);
  } catch (e) {
    throw new UsageError(`${file} is not valid JSON or YAML: ${(e as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new UsageError(`${file} must hold an object: a workflow definition (inputs, blocks, edges)`);
  }
  // Either `{name, description, definition}`, or the definition itself, which may carry the
  // workflow's `name` and `description` beside its inputs, blocks and edges, as people write it.
  const { name: docName, description: docDescription, ...rest } = doc as Record<string, unknown>;
  const definition = 'definition' in rest ? rest.definition : rest;
  for (const [field, value] of [
    ['name', docName],
    ['description', docDescription],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') {
      throw new UsageError(`${file}: "${field}" must be a string`);
    }
  }
  const workflowName = name ?? (docName as string | undefined) ?? basename(file, extname(file));
  const description = docDescription as string | undefined;

  const existing = (await client.workflows.list.query({ workspaceId })).find((w) => w.name === workflowName);
  const workflow = existing
    ? await client.workflows.update.mutate({
        id: existing.id,
        definition,
        ...(description ? { description } : {}),
      })
    : await client.workflows.create.mutate({
        workspaceId,
        name: workflowName,
        definition,
        ...(description ? { description } : {}),
      });
  const deployed = await client.workflows.deploy.mutate({ id: workflow.id });
  return { id: workflow.id, name: workflowName, created: !existing, ...deployed };
}
