// Examples of /api/v1/workflows: one workflow ("Greet", deployed at version 1) seen through each
// operation, and the errors the service really gives.
import { EX, READ_DENIED, RESOURCE_WRITE_DENIED, WRITE_DENIED } from '../../openapi/components.ts';
import { type ErrorCases, invalid } from '../../openapi/error-answers.ts';

export const NEXT_CURSOR =
  'eyJ0IjoiMjAyNi0wMS0xNVQwOTozMDowMC4wMDAxMjNaIiwiaWQiOiIzZTZiNWM5ZC04ZjRhLTRiMTItOGRhZS00ZjVhNmI3YzhkOTMifQ';

export const DEFINITION_EXAMPLE = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: "Hello, " + inputs.name + "!" }' },
    { id: 'done', type: 'response', data: { message: '<greet.message>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
};

const summary = {
  id: EX.workflowId,
  workspaceId: EX.workspaceId,
  name: 'Greet',
  description: 'Says hello',
  folderId: EX.folderId,
  isDeployed: true,
  deployedVersion: 1,
  deployedAt: EX.later,
  createdAt: EX.time,
  updatedAt: EX.time,
};

export const workflowPageExample = { success: true, data: [summary], nextCursor: NEXT_CURSOR };

export const workflowFoundExample = {
  success: true,
  data: {
    ...summary,
    definition: DEFINITION_EXAMPLE,
    inputs: DEFINITION_EXAMPLE.inputs,
    deployment: { version: 1, deployedAt: EX.later },
  },
};

export const createRequestExample = {
  workspaceId: EX.workspaceId,
  name: 'Greet',
  description: 'Says hello',
  folderId: EX.folderId,
  definition: DEFINITION_EXAMPLE,
};

export const createYamlExample = `workspaceId: ${EX.workspaceId}
name: Greet
description: Says hello
folderId: ${EX.folderId}
definition:
  inputs:
    name: { type: string, required: true }
  blocks:
    - id: greet
      type: function
      code: 'return { message: "Hello, " + inputs.name + "!" }'
    - id: done
      type: response
      data: { message: "<greet.message>" }
  edges:
    - { from: greet, to: done }
`;

export const draftExample = {
  success: true,
  data: {
    ...workflowFoundExample.data,
    isDeployed: false,
    deployedVersion: null,
    deployedAt: null,
    deployment: null,
  },
};

export const deployedExample = {
  success: true,
  data: { id: EX.workflowId, isDeployed: true, version: 2, deployedAt: EX.later },
};
export const undeployedExample = {
  success: true,
  data: { id: EX.workflowId, isDeployed: false, deployedAt: null },
};
export const rolledBackExample = {
  success: true,
  data: { id: EX.workflowId, isDeployed: true, version: 1, previousVersion: 2, deployedAt: EX.later },
};
export const versionListExample = {
  success: true,
  data: [
    { version: 1, deployed: true, deployedAt: EX.time, deployedBy: EX.userId },
    { version: 2, deployed: false, deployedAt: EX.later, deployedBy: EX.userId },
  ],
};

export const exportExample = {
  version: '1.0',
  exportedAt: EX.later,
  workflow: { id: EX.workflowId, name: 'Greet', description: 'Says hello', folderId: EX.folderId },
  definition: DEFINITION_EXAMPLE,
};

export const importRequestExample = {
  workspaceId: EX.workspaceId,
  workflow: exportExample,
  name: 'Greet (copy)',
  folderId: EX.folderId,
};

const BAD_DEFINITION = {
  error: 'Invalid workflow definition',
  details: [{ code: 'custom', path: ['definition', 'edges', 0, 'to'], message: 'Unknown block "dne"' }],
};
const NOT_FOUND = 'Workflow not found';
const NO_FOLDER = {
  error: 'Folder not found',
  details: [
    { code: 'custom', path: ['folderId'], message: 'No workflow folder with this id in the workspace' },
  ],
};
const WORKFLOW_ID_400 = invalid(['workflowId'], 'Must be a UUID', 'invalid_format');

export const listErrors: ErrorCases = {
  400: [invalid(['cursor'], 'Not a cursor returned by this endpoint', 'custom', 'Invalid request')],
  403: READ_DENIED,
  404: ['Workspace not found', NO_FOLDER],
};
export const getErrors: ErrorCases = {
  400: WORKFLOW_ID_400,
  403: 'Personal API keys are disabled in this workspace; use a workspace key',
  404: NOT_FOUND,
};
export const createErrors: ErrorCases = {
  400: [BAD_DEFINITION, invalid(['name'], 'Required', 'invalid_type', 'Invalid request body')],
  403: WRITE_DENIED,
  404: ['Workspace not found', NO_FOLDER],
};
export const writeErrors: ErrorCases = {
  400: [WORKFLOW_ID_400, BAD_DEFINITION],
  403: RESOURCE_WRITE_DENIED,
  404: [NOT_FOUND, NO_FOLDER],
};
export const undeployErrors: ErrorCases = {
  400: WORKFLOW_ID_400,
  403: RESOURCE_WRITE_DENIED,
  404: NOT_FOUND,
  409: 'The workflow is not deployed',
};
export const rollbackErrors: ErrorCases = {
  400: [
    WORKFLOW_ID_400,
    invalid(['version'], 'Too small: expected number to be >=1', 'too_small', 'Invalid request body'),
  ],
  403: RESOURCE_WRITE_DENIED,
  404: [NOT_FOUND, 'Version 7 of this workflow not found'],
};
export const exportErrors: ErrorCases = {
  400: WORKFLOW_ID_400,
  403: 'Personal API keys are disabled in this workspace; use a workspace key',
  404: [NOT_FOUND, 'Version 7 of this workflow not found'],
};
export const importErrors: ErrorCases = {
  400: [
    {
      error: 'Invalid workflow definition',
      details: [
        {
          code: 'custom',
          path: ['workflow', 'definition', 'edges', 0, 'to'],
          message: 'Unknown block "dne"',
        },
      ],
    },
    NO_FOLDER,
  ],
  403: WRITE_DENIED,
  404: 'Workspace not found',
};

export const archivedExample = {
  success: true,
  data: { id: EX.workflowId, archived: true, archivedAt: EX.later },
};
export const deleteErrors: ErrorCases = {
  400: WORKFLOW_ID_400,
  403: [
    'This action needs admin permission on the workspace',
    'The workspace is archived',
    'Personal API keys are disabled in this workspace; use a workspace key',
  ],
  404: NOT_FOUND,
};
