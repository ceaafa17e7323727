// The CLI's `deploy` shortcut: a workflow file (JSON or YAML) becomes a deployed version in one
// step. The file holds a definition, or `{name, description, definition}`; a workflow of that name
// in the workspace is updated, otherwise one is created; then it is deployed.
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parse } from 'yaml';
import type { AdminClient } from './client.ts';

export class UsageError extends Error {}

export async function deployFile(client: AdminClient, file: string, workspaceId: string, name?: string) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
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
  const wrapped = doc !== null && typeof doc === 'object' && 'definition' in doc;
  const meta = (wrapped ? doc : {}) as { name?: unknown; description?: unknown; definition?: unknown };
  const definition = wrapped ? meta.definition : doc;
  const workflowName = name ?? (typeof meta.name === 'string' ? meta.name : basename(file, extname(file)));
  const description = typeof meta.description === 'string' ? meta.description : undefined;

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
