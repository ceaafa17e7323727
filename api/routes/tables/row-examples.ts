// Examples of the row operations: requests, answers, and the errors they give.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { BAD_TABLE_ID, READ_400, WRITE_400 } from './examples.ts';

const rowExample = {
  id: EX.rowId,
  data: { email: 'ada@example.com', visits: 1 },
  position: 1,
  createdAt: EX.time,
  updatedAt: EX.time,
};

const row2Example = {
  id: EX.rowId2,
  data: { email: 'grace@example.com', visits: 2 },
  position: 2,
  createdAt: EX.time,
  updatedAt: EX.time,
};

/** The 400s of row values checked against the table's columns: they name the row and column. */
const rowValueErrors = [
  {
    error: 'Invalid row data',
    details: [
      { code: 'invalid_type', path: ['rows', 0, 'visits'], message: 'Column visits expects a finite number' },
      { code: 'required', path: ['rows', 1, 'email'], message: 'Column email is required' },
      { code: 'unrecognized_keys', path: ['rows', 2, 'nope'], message: 'No column named nope' },
    ],
  },
  {
    error: 'Unique constraint violated',
    details: [
      {
        code: 'not_unique',
        path: ['data', 'email'],
        message: `Unique column email already holds this value (row ${EX.rowId})`,
      },
    ],
  },
];

// --- Insert ---------------------------------------------------------------------------------------

export const insertRowsRequests = {
  one: {
    summary: 'One row',
    value: { workspaceId: EX.workspaceId, data: { email: 'ada@example.com', visits: 1 } },
  },
  batch: {
    summary: 'A batch',
    value: {
      workspaceId: EX.workspaceId,
      rows: [
        { email: 'ada@example.com', visits: 1 },
        { email: 'grace@example.com', visits: 2 },
      ],
    },
  },
};

export const rowsInsertedExamples = {
  one: {
    summary: 'One row',
    value: { success: true, data: { row: rowExample, message: 'Row inserted' } },
  },
  batch: {
    summary: 'A batch',
    value: {
      success: true,
      data: { rows: [rowExample, row2Example], insertedCount: 2, message: '2 rows inserted' },
    },
  },
};

export const insertRowsInvalid = [
  ...rowValueErrors,
  {
    error: 'Row limit reached: the table holds at most 50000 rows',
    details: [
      {
        code: 'too_big',
        path: ['rows'],
        message: 'The plan allows 50000 rows per table; the table has 49999 and this adds 2',
      },
    ],
  },
  invalid(
    ['data'],
    'Give either data (one row) or rows (a batch), not both',
    'custom',
    'Invalid request body',
  ),
];

// --- Query ----------------------------------------------------------------------------------------

export const rowPageExample = {
  success: true,
  data: {
    rows: [row2Example, rowExample],
    pagination: { total: 2, limit: 20, offset: 0, hasMore: false },
  },
};

export const queryRowsInvalid = [
  {
    error: 'Invalid query parameters',
    details: [
      {
        code: 'custom',
        path: ['filter'],
        message:
          "Must be JSON: Unexpected token ' at line 1, column 2: expected a property name in double quotes",
      },
      { code: 'too_small', path: ['limit'], message: 'Too small: expected number to be >=1' },
    ],
  },
  READ_400,
  BAD_TABLE_ID,
];

// --- Update ---------------------------------------------------------------------------------------

export const updateRowsRequest = {
  workspaceId: EX.workspaceId,
  filter: { visits: { lt: 3 } },
  data: { visits: 3 },
};

export const rowsUpdatedExample = {
  success: true,
  data: { message: '2 rows updated', updatedCount: 2, updatedRowIds: [EX.rowId, EX.rowId2] },
};

export const updateRowsInvalid = [
  invalid(['filter'], 'Give at least one condition', 'custom', 'Invalid request body'),
  ...rowValueErrors,
];

// --- Delete ---------------------------------------------------------------------------------------

export const deleteRowsRequests = {
  ids: { summary: 'By id', value: { workspaceId: EX.workspaceId, rowIds: [EX.rowId] } },
  filter: {
    summary: 'By filter',
    value: { workspaceId: EX.workspaceId, filter: { email: { endsWith: '@example.com' } } },
  },
};

export const rowsDeletedExample = {
  success: true,
  data: { message: '1 rows deleted', deletedCount: 1, deletedRowIds: [EX.rowId] },
};

export const deleteRowsInvalid = [
  invalid(['rowIds'], 'Give either rowIds or a filter', 'custom', 'Invalid request body'),
  WRITE_400,
];

// --- Upsert ---------------------------------------------------------------------------------------

export const upsertRowRequest = {
  workspaceId: EX.workspaceId,
  data: { email: 'ada@example.com', visits: 9 },
  conflictTarget: 'email',
};

export const rowUpsertedExample = {
  success: true,
  data: {
    row: {
      id: EX.rowId,
      data: { email: 'ada@example.com', visits: 9 },
      createdAt: EX.time,
      updatedAt: EX.later,
    },
    operation: 'update',
    message: 'Row updated',
  },
};

export const upsertRowInvalid = [
  {
    error: 'Upsert needs a table with a unique column',
    details: [{ code: 'custom', path: [], message: 'Upsert needs a table with a unique column' }],
  },
  ...rowValueErrors,
];

// --- Get ------------------------------------------------------------------------------------------

export const rowFoundExample = { success: true, data: { row: rowExample } };

const BAD_ROW_ID = invalid(['rowId'], 'Must be a UUID', 'invalid_format');

export const getRowInvalid = [READ_400, BAD_TABLE_ID, BAD_ROW_ID];

// --- Update one -----------------------------------------------------------------------------------

export const updateRowRequest = { workspaceId: EX.workspaceId, data: { visits: 2 } };

export const rowUpdatedExample = {
  success: true,
  data: {
    row: { ...rowExample, data: { email: 'ada@example.com', visits: 2 }, updatedAt: EX.later },
    message: 'Row updated successfully',
  },
};

export const updateRowInvalid = [
  {
    error: 'Invalid row data',
    details: [{ code: 'custom', path: ['data'], message: 'Give at least one column to set' }],
  },
  ...rowValueErrors,
  WRITE_400,
  BAD_ROW_ID,
];

// --- Delete one -----------------------------------------------------------------------------------

export const rowDeletedExample = {
  success: true,
  data: { message: 'Row deleted successfully', deletedCount: 1 },
};

export const deleteRowInvalid = [READ_400, BAD_TABLE_ID, BAD_ROW_ID];
