// The requests and answers of /api/v1/workflows: the list (cursor-paged), one workflow with its
// draft, create and update (JSON, or YAML for create), deploy, undeploy, versions, rollback, export
// and import. A definition is checked by the workflow format's own parser (runner/executor/
// definition.ts), whose 400 names each problem's path; here it is only required to be present.
import { z } from 'zod';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { cursorParam, EX, envelope, withFieldDocs } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';
import { DEFINITION_EXAMPLE, NEXT_CURSOR } from './v1-examples.ts';

export const workflowPath = z.object({ id: uuidParam('The workflow id', EX.workflowId, 'workflowId') });

export const listWorkflowsQuery = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    folderId: z.uuid().optional(),
    deployedOnly: z.enum(['true', 'false']).default('false'),
    limit: wholeNumberParam(1, 100).default(50),
    cursor: z.string().min(1).max(500).optional(),
  }),
  {
    workspaceId: { description: 'The workspace whose workflows to list', example: EX.workspaceId },
    folderId: {
      description:
        'Only the workflows in this workflow folder (a 404 naming folderId when the workspace has no such folder)',
      example: EX.folderId,
    },
    deployedOnly: { description: '`true`: only workflows with a deployed version', example: 'false' },
    limit: { description: 'Workflows per page (1 to 100, default 50)', example: 50 },
    cursor: { description: cursorParam, example: NEXT_CURSOR },
  },
);

const name = z.string().trim().min(1).max(200).meta({ description: 'The name', example: 'Greet' });
const description = z.string().max(2000).meta({ description: 'What it does', example: 'Says hello' });
const folderId = z.uuid().meta({
  description: 'A workflow folder of the workspace (a 404 naming folderId when it has no such folder)',
  example: EX.folderId,
});
const definition = z
  .unknown()
  .refine((v) => v !== undefined, 'Required')
  .meta({
    description: 'The workflow definition (inputs, blocks, edges); a 400 names the path of each problem',
    example: DEFINITION_EXAMPLE,
  });

export const createWorkflowBody = z.object({
  workspaceId: z.uuid(),
  name,
  description: description.optional(),
  folderId: folderId.nullable().optional(),
  definition,
});

export const updateWorkflowBody = z
  .object({
    name: name.optional(),
    description: description.optional(),
    folderId: folderId
      .nullable()
      .optional()
      .meta({ description: 'Move it into this workflow folder of its workspace; null: to the top' }),
    definition: definition.optional(),
  })
  .refine(
    (b) =>
      b.name !== undefined ||
      b.description !== undefined ||
      b.folderId !== undefined ||
      b.definition !== undefined,
    { message: 'Give at least one of name, description, folderId, definition' },
  );

export const rollbackBody = z.object({
  version: z
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .meta({ description: 'The version to deploy again', example: 1 }),
});

export const exportQuery = withFieldDocs(
  z.object({
    format: z.enum(['json', 'yaml']).default('json'),
    version: wholeNumberParam(1, 2_147_483_647).optional(),
  }),
  {
    format: { description: '`json` (default) or `yaml`', example: 'json' },
    version: { description: 'A deployed version instead of the draft', example: 1 },
  },
);

export const importBody = z.object({
  workspaceId: z.uuid(),
  workflow: z
    .unknown()
    .refine((v) => v !== undefined, 'Required')
    .meta({
      description: 'An export envelope, or a bare definition',
      example: { version: '1.0', definition: DEFINITION_EXAMPLE },
    }),
  name: name.optional(),
  folderId: folderId.nullable().optional(),
});

// --- Answers --------------------------------------------------------------------------------------

const summaryFields = {
  id: z.uuid(),
  workspaceId: z.uuid(),
  name: z.string(),
  description: z.string(),
  folderId: z
    .uuid()
    .nullable()
    .meta({ description: 'Its workflow folder; null at the top of the workspace' }),
  isDeployed: z.boolean(),
  deployedVersion: z.number().int().nullable(),
  deployedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
};

export const workflowPage = z.object({
  success: z.literal(true),
  data: z.array(z.object(summaryFields)),
  nextCursor: z.string().optional().meta({ description: 'Absent on the last page' }),
});

const definitionAnswer = z.record(z.string(), z.unknown());

export const workflowFound = envelope({
  ...summaryFields,
  definition: definitionAnswer.meta({ description: 'The draft definition' }),
  inputs: z.record(z.string(), z.unknown()).meta({ description: 'The inputs the draft declares' }),
  deployment: z
    .object({ version: z.number().int(), deployedAt: z.string() })
    .nullable()
    .meta({ description: 'The deployed version; null when not deployed' }),
});

export const deployed = envelope({
  id: z.uuid(),
  isDeployed: z.literal(true),
  version: z.number().int(),
  deployedAt: z.string(),
});

export const undeployed = envelope({ id: z.uuid(), isDeployed: z.literal(false), deployedAt: z.null() });

export const rolledBack = envelope({
  id: z.uuid(),
  isDeployed: z.literal(true),
  version: z.number().int(),
  previousVersion: z.number().int().nullable(),
  deployedAt: z.string(),
});

export const versionList = z.object({
  success: z.literal(true),
  data: z.array(
    z.object({
      version: z.number().int(),
      deployed: z.boolean(),
      deployedAt: z.string(),
      deployedBy: z.string().nullable(),
    }),
  ),
});

export const exportEnvelope = z.object({
  version: z.literal('1.0'),
  exportedAt: z.string(),
  workflow: z.object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    folderId: z
      .uuid()
      .nullable()
      .meta({ description: 'Its folder where it was exported (import takes its own)' }),
  }),
  deployedVersion: z.number().int().optional().meta({ description: 'With `?version=N`: that version' }),
  definition: definitionAnswer,
});

export const exportAnswer = z.object({ success: z.literal(true), data: exportEnvelope });

/** A YAML document as text: the same fields as the JSON form (YAML is read into them). */
export const yamlText = (what: string) => z.string().meta({ description: `${what}, as a YAML document` });

export const archived = envelope({
  id: z.uuid(),
  archived: z.literal(true),
  archivedAt: z.string().meta({ description: 'When it was deleted (archived)' }),
});
