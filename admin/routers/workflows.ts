// Admin: workflows (drafts, deployments, versions, rollback to an earlier version).
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import {
  deployWorkflow,
  listVersions,
  rollbackWorkflow,
  undeployWorkflow,
} from '../../db/workflow-deployments.ts';
import { createWorkflow, getWorkflow, listWorkflows, updateWorkflow } from '../../db/workflows.ts';
import { notFound } from '../../errors.ts';
import { parseDefinition } from '../../runner/executor/definition.ts';
import { procedure, router } from '../trpc.ts';

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
// The definition is checked by the workflow format's own validator, which names every problem's path.
const definition = z.unknown().refine((v) => v !== undefined, 'Required');
const byId = z.object({ id: z.uuid() });
// A workflow folder of the workspace (folders.create with kind workflow); null: the top of the workspace.
const folderId = z.uuid().nullable();

export const workflowsRouter = router({
  create: procedure
    .meta({ description: 'Create a workflow (a draft) in a workspace from a definition' })
    .input(
      z.object({
        workspaceId: z.uuid(),
        name,
        description: description.optional(),
        folderId: folderId.optional(),
        definition,
      }),
    )
    .mutation(({ ctx, input }) =>
      createWorkflow(ctx.db, ADMIN_ACTOR, { ...input, definition: parseDefinition(input.definition) }),
    ),
  update: procedure
    .meta({ description: "Change a workflow's name, description, folder or draft definition" })
    .input(
      byId
        .extend({
          name: name.optional(),
          description: description.optional(),
          folderId: folderId.optional(),
          definition: z.unknown().optional(),
        })
        .refine(
          (i) =>
            i.name !== undefined ||
            i.description !== undefined ||
            i.folderId !== undefined ||
            i.definition !== undefined,
          { message: 'Give at least one of name, description, folderId, definition' },
        ),
    )
    .mutation(({ ctx, input }) => {
      const { id, definition, ...changes } = input;
      return updateWorkflow(ctx.db, ADMIN_ACTOR, id, {
        ...changes,
        ...(definition === undefined ? {} : { definition: parseDefinition(definition) }),
      });
    }),
  get: procedure
    .meta({ description: 'Show a workflow with its draft definition and deployed version' })
    .input(byId)
    .query(async ({ ctx, input }) => {
      const workflow = await getWorkflow(ctx.db, input.id);
      if (!workflow) throw notFound('Workflow');
      return workflow;
    }),
  list: procedure
    .meta({
      description: "List a workspace's workflows (with folderId, those in that folder; null: at the top)",
    })
    .input(z.object({ workspaceId: z.uuid(), folderId: folderId.optional() }))
    .query(({ ctx, input }) => listWorkflows(ctx.db, input.workspaceId, input.folderId)),
  deploy: procedure
    .meta({ description: 'Deploy the draft as a new immutable version: executions run it' })
    .input(byId)
    .mutation(({ ctx, input }) => deployWorkflow(ctx.db, ADMIN_ACTOR, input.id, parseDefinition)),
  undeploy: procedure
    .meta({ description: 'Stop a workflow from running: executions are refused until it is deployed again' })
    .input(byId)
    .mutation(({ ctx, input }) => undeployWorkflow(ctx.db, ADMIN_ACTOR, input.id)),
  versions: procedure
    .meta({ description: "List a workflow's deployed versions" })
    .input(byId)
    .query(({ ctx, input }) => listVersions(ctx.db, input.id)),
  rollback: procedure
    .meta({ description: 'Deploy an existing version again (no new version is made)' })
    .input(byId.extend({ version: z.number().int().min(1) }))
    .mutation(({ ctx, input }) =>
      rollbackWorkflow(ctx.db, ADMIN_ACTOR, input.id, input.version, parseDefinition),
    ),
});
