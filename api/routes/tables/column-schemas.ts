// The requests and answers of the column changes: add a column, change one (the original
// service's shapes). Deleting one is in schemas.ts. The store checks what no field schema can see
// (a select column's options, a default's type, the rows there are).
import { z } from 'zod';
import { columnUpdatesSchema } from '../../../db/tables/columns.ts';
import { MAX_SELECT_OPTIONS } from '../../../db/tables/select-options.ts';
import { columnDefSchema } from '../../../db/tables/values.ts';
import { envelope } from '../../openapi/components.ts';
import { columnSchema, WORKSPACE } from './schemas.ts';

const OPTIONS =
  `A select column's options (1 to ${MAX_SELECT_OPTIONS}): \`{id, name}\`, or \`{name}\` or a bare name, ` +
  'whose id is then that of an existing option of that name, else the name itself. Rows hold the id; ' +
  'a value is written as an id or a name (ignoring case).';

export const addColumnBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  column: columnDefSchema.meta({
    description:
      'The new column: name (`^[a-z_][a-z0-9_]*$`, up to 50 characters, not one the table has), type ' +
      '(string, number, boolean, date, json, select), `required` and `unique` (not on json or select; ' +
      `both false by default), \`options\` for a select column. ${OPTIONS}`,
  }),
  default: z
    .unknown()
    .optional()
    .meta({
      description:
        'A value of the column written into every existing row (not kept for later inserts). Needed for ' +
        'a required column when the table has rows; refused for a unique column of more than one row.',
      example: 'lead',
    }),
});

export const updateColumnBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  columnName: z.string().min(1).max(50).meta({ description: 'The column to change, by its current name' }),
  updates: columnUpdatesSchema.meta({
    description:
      'At least one change, all made or none: `name` (rows, unique values and filters follow it), ' +
      '`type` (every value converted first; one that does not convert refuses the change, naming the ' +
      'rows), `required` (refused while rows have no value), `unique` (refused while rows share a ' +
      `value), \`options\` of a select column (refused while rows hold an option left out). ${OPTIONS}`,
  }),
});

export const columnsChanged = envelope({ columns: z.array(columnSchema), message: z.string() }).meta({
  id: 'ColumnsChanged',
});
