// Typed tags of knowledge documents. A knowledge base defines tag names; each name takes one slot
// of its type (text1..text7, number1..number5, date1..date2, boolean1..boolean3), and a document
// holds its value in the matching column `tag_<slot>`. One name can sit in different slots in
// different knowledge bases, so the SQL column of a tag is always looked up per knowledge base,
// and column names come only from the fixed slot list below, never from input.
import { z } from 'zod';
import {
  conflict,
  type FieldIssue,
  invalidField,
  isUniqueViolation,
  notFound,
  ServiceError,
} from '../../errors.ts';
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { parseIsoInstant } from '../instants.ts';

export const TAG_TYPES = ['text', 'number', 'date', 'boolean'] as const;
export type TagType = (typeof TAG_TYPES)[number];

/** How many tags of each type a knowledge base holds: the document columns there are. */
export const TAG_SLOTS: Readonly<Record<TagType, number>> = { text: 7, number: 5, date: 2, boolean: 3 };

export const MAX_TAG_NAME = 100;
export const MAX_TEXT_TAG_VALUE = 1000;

/** Every slot, in definition order: text1..text7, number1..number5, date1..date2, boolean1..boolean3. */
export const ALL_TAG_SLOTS: readonly string[] = TAG_TYPES.flatMap((type) =>
  Array.from({ length: TAG_SLOTS[type] }, (_, i) => `${type}${i + 1}`),
);
const SLOT_SET: ReadonlySet<string> = new Set(ALL_TAG_SLOTS);

/** The document columns of all slots, as a select list: `d.tag_text1, …, d.tag_boolean3`. */
export const TAG_COLUMNS_SQL = ALL_TAG_SLOTS.map((s) => `d.tag_${s}`).join(', ');

export interface TagDefinition {
  name: string;
  type: TagType;
  slot: string;
}

/** A tag's value: text, number, date (ISO 8601 text in, ISO instant out), boolean; null for none. */
export type TagValue = string | number | boolean | null;

/** The SQL column of a slot. Throws on anything outside the fixed list, so no input reaches SQL. */
export function tagColumn(slot: string): string {
  if (!SLOT_SET.has(slot)) throw new Error(`Not a tag slot: ${slot}`);
  return `tag_${slot}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export const tagNameSchema = z
  .string()
  .trim()
  .min(1, 'A tag name is 1 to 100 characters')
  .max(MAX_TAG_NAME, 'A tag name is 1 to 100 characters')
  .refine((s) => !CONTROL.test(s) && s.isWellFormed(), 'A tag name holds no control characters');
export const tagTypeSchema = z.enum(TAG_TYPES);

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidField(field, r.error.issues[0]?.message ?? 'Invalid value');
  return r.data;
}

/**
 * Defines a tag on a knowledge base in the first free slot of its type. Under a lock on the
 * knowledge base row, so racing definitions neither share a slot nor a name (the primary key and
 * unique name are the guarantee all the same). Records knowledge.tag_defined.
 */
export async function defineTag(
  db: Queryable,
  actor: Actor,
  input: { knowledgeBaseId: string; name: string; type: TagType },
): Promise<TagDefinition> {
  const name = parse(tagNameSchema, input.name, 'name');
  const type = parse(tagTypeSchema, input.type, 'type');
  if (!isUuid(input.knowledgeBaseId)) throw notFound('Knowledge base');
  try {
    return await db.transaction(async (tx) => {
      // `no key update`: serialises tag definitions of the base without blocking the documents and
      // chunks that merely reference it.
      const [kb] = await tx.query<{ workspace_id: string; organization_id: string }>(
        `select kb.workspace_id, w.organization_id
           from knowledge_bases kb join workspaces w on w.id = kb.workspace_id
          where kb.id = $1 for no key update of kb`,
        [input.knowledgeBaseId],
      );
      if (!kb) throw notFound('Knowledge base');
      const held = await tx.query<{ slot: string; name: string }>(
        'select slot, name from knowledge_tags where knowledge_base_id = $1',
        [input.knowledgeBaseId],
      );
      if (held.some((t) => t.name === name)) throw conflict(`A tag named ${name} already exists`);
      const taken = new Set(held.map((t) => t.slot));
      const slot = ALL_TAG_SLOTS.find((s) => s.startsWith(type) && !taken.has(s));
      if (!slot) {
        throw invalidField('type', `A knowledge base holds at most ${TAG_SLOTS[type]} ${type} tags`);
      }
      await tx.query(
        'insert into knowledge_tags (knowledge_base_id, slot, name, type) values ($1, $2, $3, $4)',
        [input.knowledgeBaseId, slot, name, type],
      );
      await recordAudit(tx, actor, {
        organizationId: kb.organization_id,
        workspaceId: kb.workspace_id,
        action: 'knowledge.tag_defined',
        resourceType: 'knowledge_base',
        resourceId: input.knowledgeBaseId,
        metadata: { name, type, slot },
      });
      return { name, type, slot };
    });
  } catch (err) {
    if (isUniqueViolation(err, 'knowledge_tags_knowledge_base_id_name_key')) {
      throw conflict(`A tag named ${name} already exists`);
    }
    throw err;
  }
}

/** The tag definitions of each given knowledge base (an empty list for one without tags), by slot. */
export async function listTags(
  db: Queryable,
  knowledgeBaseIds: readonly string[],
): Promise<Map<string, TagDefinition[]>> {
  const byBase = new Map<string, TagDefinition[]>(knowledgeBaseIds.map((id) => [id, []]));
  const ids = knowledgeBaseIds.filter(isUuid);
  if (!ids.length) return byBase;
  const rows = await db.query<{ knowledge_base_id: string; name: string; type: TagType; slot: string }>(
    `select knowledge_base_id, name, type, slot from knowledge_tags
      where knowledge_base_id = any($1::uuid[]) order by knowledge_base_id, created_at, slot`,
    [ids],
  );
  for (const r of rows) byBase.get(r.knowledge_base_id)?.push({ name: r.name, type: r.type, slot: r.slot });
  return byBase;
}

/**
 * A document row's tag values by tag name (its `tag_<slot>` columns read through the base's
 * definitions). Tags the document has no value for are left out; dates are ISO instants.
 */
export function documentTags(
  row: Record<string, unknown>,
  tags: readonly TagDefinition[],
): Record<string, TagValue> {
  const out: Record<string, TagValue> = {};
  for (const tag of tags) {
    const v = row[tagColumn(tag.slot)];
    if (v === null || v === undefined) continue;
    if (tag.type === 'date') out[tag.name] = (v instanceof Date ? v : new Date(String(v))).toISOString();
    else if (tag.type === 'number') out[tag.name] = Number(v);
    else out[tag.name] = v as string | boolean;
  }
  return out;
}

/** The SQL type of each tag type's column. */
export const TAG_SQL_TYPE: Readonly<Record<TagType, string>> = {
  text: 'text',
  number: 'double precision',
  date: 'timestamptz',
  boolean: 'boolean',
};

export type TagValueCheck = { ok: true; value: string | number | boolean } | { ok: false; message: string };

/**
 * A value checked against a tag type: text as given, a finite number, a date as its ISO instant,
 * a boolean; or what the tag takes instead (a message to follow "Tag <name> ").
 */
export function checkTagValue(type: TagType, v: unknown): TagValueCheck {
  switch (type) {
    case 'text':
      return typeof v === 'string' &&
        v.length <= MAX_TEXT_TAG_VALUE &&
        v.isWellFormed() &&
        !v.includes('\u0000')
        ? { ok: true, value: v }
        : { ok: false, message: `takes text of at most ${MAX_TEXT_TAG_VALUE} characters` };
    case 'number':
      return typeof v === 'number' && Number.isFinite(v)
        ? { ok: true, value: v }
        : { ok: false, message: 'takes a finite number' };
    case 'date': {
      const at = typeof v === 'string' ? parseIsoInstant(v) : null;
      return at
        ? { ok: true, value: at.toISOString() }
        : { ok: false, message: 'takes an ISO 8601 date or date-time' };
    }
    case 'boolean':
      return typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, message: 'takes true or false' };
  }
}

// One fixed statement for any set of changed tags: $2 is a JSON object of slot to value (or null),
// read back as text and cast, and a slot absent from it keeps its value. A fixed text is prepared once per connection.
const SET_TAGS_SQL = `update knowledge_documents set ${ALL_TAG_SLOTS.map((s) => {
  const type = TAG_TYPES.find((t) => s.startsWith(t)) as TagType;
  return `tag_${s} = case when $2::jsonb ? '${s}' then ($2::jsonb ->> '${s}')::${TAG_SQL_TYPE[type]} else tag_${s} end`;
}).join(', ')} where id = $1 returning ${ALL_TAG_SLOTS.map((s) => `tag_${s}`).join(', ')}`;

/**
 * Sets tag values of a document by tag name; null clears one, tags not named keep theirs. A name
 * the document's knowledge base does not define, or a value of the wrong type, is a 400 naming
 * the tag under `tags`. Records knowledge.document_tags_set. Answers all the document's tag values.
 */
export async function setDocumentTags(
  db: Queryable,
  actor: Actor,
  input: { documentId: string; tags: Record<string, unknown> },
): Promise<Record<string, TagValue>> {
  if (!isUuid(input.documentId)) throw notFound('Document');
  const given = input.tags;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw invalidField('tags', 'Tags are an object of tag name to value');
  }
  return db.transaction(async (tx) => {
    const [doc] = await tx.query<{
      knowledge_base_id: string;
      workspace_id: string;
      organization_id: string;
    }>(
      `select d.knowledge_base_id, d.workspace_id, w.organization_id
         from knowledge_documents d join workspaces w on w.id = d.workspace_id
        where d.id = $1 for no key update of d`,
      [input.documentId],
    );
    if (!doc) throw notFound('Document');
    const tags = (await listTags(tx, [doc.knowledge_base_id])).get(doc.knowledge_base_id) ?? [];
    const byName = new Map(tags.map((t) => [t.name, t]));
    const issues: FieldIssue[] = [];
    const changes: Record<string, string | number | boolean | null> = {};
    for (const [name, value] of Object.entries(given)) {
      const tag = byName.get(name);
      if (!tag) {
        issues.push({ code: 'unrecognized_keys', path: ['tags', name], message: `No tag named ${name}` });
        continue;
      }
      if (value === null) {
        changes[tag.slot] = null;
        continue;
      }
      const checked = checkTagValue(tag.type, value);
      if (checked.ok) changes[tag.slot] = checked.value;
      else
        issues.push({
          code: 'invalid_type',
          path: ['tags', name],
          message: `Tag ${name} ${checked.message}`,
        });
    }
    if (issues.length) throw new ServiceError(400, 'Invalid tags', { details: issues });
    const [row] = await tx.query(SET_TAGS_SQL, [input.documentId, JSON.stringify(changes)]);
    await recordAudit(tx, actor, {
      organizationId: doc.organization_id,
      workspaceId: doc.workspace_id,
      action: 'knowledge.document_tags_set',
      resourceType: 'knowledge_document',
      resourceId: input.documentId,
      metadata: { tags: Object.keys(given) },
    });
    return documentTags(row ?? {}, tags);
  });
}

/**
 * Removes a tag definition from a knowledge base and clears its values from every document, so a
 * tag defined later in the freed slot starts empty. Under the same lock as defineTag. Records
 * knowledge.tag_deleted. Answers how many documents held a value.
 */
export async function deleteTag(
  db: Queryable,
  actor: Actor,
  input: { knowledgeBaseId: string; workspaceId: string; name: string },
): Promise<{ name: string; clearedDocuments: number }> {
  if (!isUuid(input.knowledgeBaseId)) throw notFound('Knowledge base');
  return db.transaction(async (tx) => {
    const [kb] = await tx.query<{ organization_id: string }>(
      `select w.organization_id from knowledge_bases kb join workspaces w on w.id = kb.workspace_id
        where kb.id = $1 and kb.workspace_id = $2 for no key update of kb`,
      [input.knowledgeBaseId, input.workspaceId],
    );
    if (!kb) throw notFound('Knowledge base');
    const [tag] = await tx.query<{ slot: string; type: TagType }>(
      'delete from knowledge_tags where knowledge_base_id = $1 and name = $2 returning slot, type',
      [input.knowledgeBaseId, input.name],
    );
    if (!tag) throw notFound('Tag');
    const column = tagColumn(tag.slot);
    const cleared = await tx.query<{ id: string }>(
      `update knowledge_documents set ${column} = null
        where knowledge_base_id = $1 and ${column} is not null returning id`,
      [input.knowledgeBaseId],
    );
    await recordAudit(tx, actor, {
      organizationId: kb.organization_id,
      workspaceId: input.workspaceId,
      action: 'knowledge.tag_deleted',
      resourceType: 'knowledge_base',
      resourceId: input.knowledgeBaseId,
      metadata: { name: input.name, type: tag.type, slot: tag.slot, clearedDocuments: cleared.length },
    });
    return { name: input.name, clearedDocuments: cleared.length };
  });
}
