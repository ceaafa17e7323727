// Examples of GET /api/v1/logs and GET /api/v1/logs/{id}: entries, pages, and the errors.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';

/** A `nextCursor` as the lists answer it (audit logs too). */
export const NEXT_CURSOR = 'eyJ0IjoiMjAyNi0wMS0xNVQwOTozMDowMC4wMDAwMDBaIiwiaWQiOiI0ZjdjNmRhZSJ9';

const entryExample = {
  id: EX.logId,
  workflowId: EX.workflowId,
  executionId: EX.executionId,
  level: 'info',
  trigger: 'api',
  totalDurationMs: 48,
  startedAt: EX.time,
  endedAt: '2026-01-15T09:30:00.048Z',
  createdAt: '2026-01-15T09:29:59.990Z',
};

const detailExample = {
  ...entryExample,
  cost: { total: 0.005, base: 0.005, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
  workflow: { id: EX.workflowId, name: 'greet', description: 'Says hello' },
  executionData: {
    traceSpans: [
      {
        blockId: 'greet',
        type: 'function',
        status: 'success',
        startedAt: EX.time,
        endedAt: '2026-01-15T09:30:00.031Z',
        durationMs: 31,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: function code, as the workflow holds it
        input: { code: 'return { message: `Hello, ${inputs.name}!` }' },
        output: { message: 'Hello, Ada!' },
      },
    ],
    finalOutput: { message: 'Hello, Ada!' },
    inputs: { name: 'Ada' },
  },
};

export const logPageExamples = {
  basic: {
    summary: 'details=basic',
    value: { data: [{ ...entryExample, cost: { total: 0.005 } }], nextCursor: NEXT_CURSOR },
  },
  full: { summary: 'details=full, last page', value: { data: [detailExample] } },
};

export const logDetailExample = { data: detailExample };

/** The 400 of a query whose workspaceId is not a UUID (audit logs too). */
export const READ_400 = invalid(
  ['workspaceId'],
  'Invalid UUID',
  'invalid_format',
  'Invalid query parameters',
);

export const listLogsInvalid = [
  {
    error: 'Invalid query parameters',
    details: [
      { code: 'invalid_value', path: ['level'], message: 'Invalid option: expected one of "info"|"error"' },
    ],
  },
  invalid(['cursor'], 'Not a cursor returned by this endpoint'),
  READ_400,
];

export const getLogInvalid = invalid(['id'], 'Must be a UUID', 'invalid_format');

export const getExecutionLogInvalid = invalid(['executionId'], 'Must be a UUID', 'invalid_format');
