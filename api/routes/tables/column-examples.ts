// Examples of the column changes: requests, answers, and the errors they give (the messages the
// service really gives). The first request of each is valid against the table the other table
// examples use (email, visits), in the order the document lists them: add `stage`, then change it.
import { EX } from '../../openapi/components.ts';
import type { ErrorCases } from '../../openapi/error-answers.ts';
import { columnsExample, WRITE_400 } from './examples.ts';

const STAGES = [
  { id: 'lead', name: 'Lead' },
  { id: 'customer', name: 'Customer' },
];
const stage = { name: 'stage', type: 'select', required: true, unique: false, options: STAGES };

export const addColumnRequests = {
  select: {
    summary: 'A required select column, its default filling the rows there are',
    value: {
      workspaceId: EX.workspaceId,
      column: { name: 'stage', type: 'select', required: true, options: STAGES },
      default: 'Lead',
    },
  },
  optional: {
    summary: 'An optional column: existing rows have no value',
    value: { workspaceId: EX.workspaceId, column: { name: 'notes', type: 'string' } },
  },
  options: {
    summary: 'Options by name only: each id is its name',
    value: {
      workspaceId: EX.workspaceId,
      column: { name: 'tier', type: 'select', options: ['gold', 'silver'] },
    },
  },
};

export const columnAddedExample = {
  success: true,
  data: { columns: [...columnsExample, stage], message: 'Column stage added' },
};

export const addColumnErrors = {
  400: [
    {
      error: 'Invalid request',
      details: [
        {
          code: 'custom',
          path: ['default'],
          message: 'The table has 2 rows: a required column needs a default to fill them',
        },
      ],
    },
    {
      error: 'Invalid request',
      details: [
        {
          code: 'invalid_value',
          path: ['default'],
          message: 'Column stage expects one of its options (Lead, Customer)',
        },
      ],
    },
    {
      error: 'Invalid column',
      details: [
        { code: 'custom', path: ['column', 'options'], message: 'A select column needs its options' },
      ],
    },
    WRITE_400,
  ],
  409: 'The table already has a column named stage',
} satisfies ErrorCases;

export const updateColumnRequests = {
  options: {
    summary: 'Add an option to a select column',
    value: {
      workspaceId: EX.workspaceId,
      columnName: 'stage',
      updates: { options: [...STAGES, { id: 'churned', name: 'Churned' }] },
    },
  },
  type: {
    summary: 'Change the type: every value is converted, or nothing changes',
    value: { workspaceId: EX.workspaceId, columnName: 'visits', updates: { type: 'string' } },
  },
  rename: {
    summary: 'Rename, and make unique',
    value: {
      workspaceId: EX.workspaceId,
      columnName: 'email',
      updates: { name: 'work_email', unique: true },
    },
  },
};

export const columnUpdatedExample = {
  success: true,
  data: {
    columns: [...columnsExample, { ...stage, options: [...STAGES, { id: 'churned', name: 'Churned' }] }],
    message: 'Column stage updated',
  },
};

export const updateColumnErrors = {
  400: [
    {
      error: 'Column visits cannot become number: values do not convert (2 rows)',
      details: [
        {
          code: 'not_convertible',
          path: ['rows', EX.rowId, 'visits'],
          message: 'Row at position 3: "many" is not a number',
        },
        {
          code: 'not_convertible',
          path: ['rows', EX.rowId2, 'visits'],
          message: 'Row at position 8: "12 or so" is not a number',
        },
      ],
    },
    {
      error: 'Column email cannot become unique: values repeat (1 row)',
      details: [
        {
          code: 'not_unique',
          path: ['rows', EX.rowId2, 'email'],
          message: `Row at position 8 holds the value of the row at position 3 (${EX.rowId})`,
        },
      ],
    },
    {
      error: 'Column visits cannot become required: rows have no value (1 row)',
      details: [
        {
          code: 'required',
          path: ['rows', EX.rowId, 'visits'],
          message: 'Row at position 3 has no value of visits',
        },
      ],
    },
    {
      error: 'The new options of column stage leave out values that rows hold (1 row)',
      details: [
        {
          code: 'invalid_value',
          path: ['rows', EX.rowId, 'stage'],
          message: 'Row at position 3 holds the option "customer", which the new options leave out',
        },
      ],
    },
    {
      error: 'Invalid column change',
      details: [{ code: 'custom', path: ['updates', 'unique'], message: 'A json column cannot be unique' }],
    },
    WRITE_400,
  ],
  404: ['Column not found', 'Table not found', 'Workspace not found'],
  409: 'The table already has a column named work_email',
} satisfies ErrorCases;
