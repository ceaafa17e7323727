// Examples of the table operations (requests, answers, the errors they give), and the error answers
// every table and row operation shares: a write's, a read's.
import { API_RATE_LIMITED, EX, READ_DENIED, WRITE_DENIED } from '../../openapi/components.ts';
import { type ErrorCases, errors, invalid, withIdempotency } from '../../openapi/error-answers.ts';

export const columnsExample = [
  { name: 'email', type: 'string', required: true, unique: true },
  { name: 'visits', type: 'number', required: false, unique: false },
];

export const tableExample = {
  id: EX.tableId,
  name: 'contacts',
  description: 'People we know',
  schema: { columns: columnsExample },
  rowCount: 0,
  maxRows: 50000,
  workspaceId: EX.workspaceId,
  createdAt: EX.time,
  updatedAt: EX.time,
};

// --- Errors every operation shares ----------------------------------------------------------------

export const WRITE_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid request body');
export const READ_400 = invalid(
  ['workspaceId'],
  'Invalid UUID',
  'invalid_format',
  'Invalid query parameters',
);
export const BAD_TABLE_ID = invalid(['tableId'], 'Must be a UUID', 'invalid_format');

/** The errors of a write to a table (with those of an Idempotency-Key when it takes one). */
export const writeErrors = <C extends ErrorCases>(more: C, idempotent = false) => {
  const cases = {
    403: WRITE_DENIED,
    404: ['Table not found', 'Workspace not found'],
    413: 'Request body over 10485760 bytes',
    429: API_RATE_LIMITED,
    ...more,
  };
  return idempotent
    ? errors(withIdempotency(cases), { metering: 'api', retryAfter: [409] })
    : errors(cases, { metering: 'api' });
};

/** The errors of a read of a table. */
export const readErrors = <C extends ErrorCases>(more: C) =>
  errors(
    {
      400: [READ_400, BAD_TABLE_ID],
      403: READ_DENIED,
      404: ['Table not found', 'Workspace not found'],
      429: API_RATE_LIMITED,
      ...more,
    },
    { metering: 'api' },
  );

// --- Tables ---------------------------------------------------------------------------------------

export const createTableRequest = {
  workspaceId: EX.workspaceId,
  name: 'contacts',
  description: 'People we know',
  schema: {
    columns: [
      { name: 'email', type: 'string', required: true, unique: true },
      { name: 'visits', type: 'number' },
    ],
  },
};

export const tableCreatedExample = {
  success: true,
  data: { table: tableExample, message: 'Table contacts created' },
};

export const createTableErrors = {
  400: [
    invalid(
      ['schema', 'columns'],
      'Too small: expected array to have >=1 items',
      'too_small',
      'Invalid request body',
    ),
    invalid(
      ['schema', 'columns', 1, 'unique'],
      'A json column cannot be unique',
      'custom',
      'Invalid request body',
    ),
    'Malformed JSON body: Unexpected token } at line 3, column 1: expected a value',
  ],
  403: ['The free plan allows at most 5 tables per workspace', ...WRITE_DENIED],
  404: 'Workspace not found',
  409: 'A table named contacts already exists in this workspace',
} satisfies ErrorCases;

export const tableListExample = { success: true, data: { tables: [tableExample], totalCount: 1 } };

export const tableFoundExample = { success: true, data: { table: { ...tableExample, rowCount: 2 } } };

export const deleteTableRequest = { workspaceId: EX.workspaceId };

export const tableDeletedExample = { success: true, data: { message: 'Table deleted', tableId: EX.tableId } };

export const deleteColumnRequest = { workspaceId: EX.workspaceId, columnName: 'visits' };

export const columnDeletedExample = {
  success: true,
  data: { columns: [columnsExample[0]], message: 'Column visits deleted' },
};

export const deleteColumnErrors = {
  400: [
    {
      error: 'The last column of a table cannot be deleted',
      details: [{ code: 'custom', path: ['columnName'], message: 'The table must keep at least one column' }],
    },
    WRITE_400,
  ],
  404: ['Column not found', 'Table not found', 'Workspace not found'],
} satisfies ErrorCases;
