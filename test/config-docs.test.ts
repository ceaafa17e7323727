// docs/configuration.md holds the table that scripts/config-docs.ts generates from config.ts: a variable
// added, removed or redescribed in config.ts without regenerating the page fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema, loadConfig } from '../config.ts';
import { CONFIG_DOC_PATH, configRows, REGENERATE_COMMAND, renderConfigDoc } from '../scripts/config-docs.ts';

describe('docs/configuration.md', () => {
  it('is the page scripts/config-docs.ts generates from config.ts', () => {
    const page = readFileSync(CONFIG_DOC_PATH, 'utf8');
    const current = renderConfigDoc(page);
    expect(
      page === current,
      `docs/configuration.md is out of date with config.ts: run ${REGENERATE_COMMAND}`,
    ).toBe(true);
  });

  it('documents every variable config.ts reads, each with a meaning', () => {
    const page = readFileSync(CONFIG_DOC_PATH, 'utf8');
    const rows = configRows();
    expect(rows.map((r) => r.name)).toEqual(Object.keys(envSchema.shape));
    for (const row of rows) {
      expect(row.meaning.length, row.name).toBeGreaterThan(10);
      expect(page).toContain(`| \`${row.name}\` `);
    }
  });

  it('shows the defaults the service really applies', () => {
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    for (const row of configRows()) {
      const value = config[row.name];
      if (value === undefined) continue;
      // The one list (HTTP_ALLOW_LIST) defaults to none.
      const shown = Array.isArray(value) && value.length === 0 ? 'empty' : `\`${String(value)}\``;
      expect(row.shownDefault, row.name).toBe(shown);
    }
  });
});
