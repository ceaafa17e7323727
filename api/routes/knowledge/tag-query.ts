// Tag filters of the document list as query parameters: `tag.<name>=<value>` keeps the documents
// whose tag equals the value (the search's `eq`, so text ignores case). Query values are text, so
// each is read as its tag's type first: a number as a number, `true` / `false` as a boolean, a date
// and text as given; one that does not fit is a 400 naming the parameter.
import type { Queryable } from '../../../db/client.ts';
import type { TagFilter } from '../../../db/knowledge/tag-filters.ts';
import { compileTagFilters } from '../../../db/knowledge/tag-filters.ts';
import { listTags, type TagDefinition } from '../../../db/knowledge/tags.ts';
import { type FieldIssue, ServiceError } from '../../../errors.ts';

const PREFIX = 'tag.';
export const MAX_DOCUMENT_TAG_FILTERS = 20;

function typed(tag: TagDefinition | undefined, raw: string): string | number | boolean {
  if (tag?.type === 'number' && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  if (tag?.type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

/** The list's tag filters from the request's query (all its parameters, each with all its values). */
export async function documentTagFilters(
  db: Queryable,
  knowledgeBaseId: string,
  query: Record<string, string[]>,
): Promise<{ filters: TagFilter[]; tags: TagDefinition[] }> {
  const given = Object.entries(query)
    .filter(([key]) => key.startsWith(PREFIX))
    .flatMap(([key, values]) =>
      values.map((value) => ({ param: key, name: key.slice(PREFIX.length), value })),
    );
  if (!given.length) return { filters: [], tags: [] };
  if (given.length > MAX_DOCUMENT_TAG_FILTERS) {
    throw new ServiceError(400, 'Invalid query parameters', {
      details: [
        { code: 'too_big', path: ['tag'], message: `At most ${MAX_DOCUMENT_TAG_FILTERS} tag filters` },
      ],
    });
  }
  const tags = (await listTags(db, [knowledgeBaseId])).get(knowledgeBaseId) ?? [];
  const filters = given.map((g) => ({
    tagName: g.name,
    operator: 'eq' as const,
    value: typed(
      tags.find((t) => t.name === g.name),
      g.value,
    ),
  }));
  try {
    // Compiled here for its 400s, named after the query parameters; the list compiles it again.
    compileTagFilters(filters, [{ id: knowledgeBaseId, tags }], []);
  } catch (err) {
    if (!(err instanceof ServiceError) || err.status !== 400) throw err;
    const details: FieldIssue[] = (err.details ?? []).map((d) => ({
      ...d,
      path: [given[Number(d.path[1])]?.param ?? 'tag'],
    }));
    throw new ServiceError(400, 'Invalid query parameters', { details });
  }
  return { filters, tags };
}
