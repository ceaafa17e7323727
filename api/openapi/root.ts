// The API's root, `/`: where someone who opens the API's address starts. A browser gets a small page
// pointing at the reference (/docs), the OpenAPI document and the admin console; a program gets the
// same pointers as JSON. Both are documented here, as GET / of the OpenAPI document.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ok } from './components.ts';
import { errors } from './error-answers.ts';

export const ROOT_JSON = {
  name: 'Workflow service API',
  docs: '/docs',
  openapi: '/api/openapi.json',
};

// No script, font or image from elsewhere: the page works offline, as /docs does.
export const ROOT_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workflow service API</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
code { background: #f2f2f2; padding: 0 0.25em; border-radius: 3px; }
</style>
</head>
<body>
<h1>Workflow service API</h1>
<p>This address serves the REST API: programs call it with an API key in the <code>X-API-Key</code> header.</p>
<ul>
<li><a href="/docs">API reference</a>: every endpoint, with requests you can copy and try.</li>
<li><a href="/api/openapi.json">OpenAPI document</a>: for client generators and API tools.</li>
</ul>
<p>Organizations, workspaces, API keys and workflows are managed in the <strong>admin console</strong>,
served by the admin plane on its own port (<code>ADMIN_PORT</code>, 3001 by default) of the machine
running the service; it listens on loopback only unless <code>ADMIN_HOST</code> opens it.</p>
</body>
</html>
`;

const rootSchema = z
  .object({
    name: z.string(),
    docs: z.string().meta({ description: 'The reference page (HTML)' }),
    openapi: z.string().meta({ description: 'This OpenAPI document' }),
  })
  .meta({ id: 'Root' });

export function registerRoot(registry: OpenAPIRegistry) {
  const answer = ok(
    {
      description: 'Where to go next: JSON for programs, an HTML page for a browser (`Accept: text/html`)',
      schema: rootSchema,
      example: ROOT_JSON,
    },
    'none',
    { headers: { Vary: { description: 'Accept: the answer depends on it', schema: { type: 'string' } } } },
  );
  registry.registerPath({
    method: 'get',
    path: '/',
    operationId: 'root',
    tags: ['Service'],
    summary: 'Where to start',
    description:
      'Points at the reference page (/docs) and this document. No API key needed. A browser, asking for ' +
      '`text/html`, gets a page with the same links and where the admin console is.',
    security: [],
    responses: {
      200: {
        ...answer,
        content: {
          ...answer.content,
          'text/html': { schema: z.string(), example: ROOT_HTML },
        },
      },
      ...errors({}, { metering: 'none', authenticated: false }),
    },
  });
}
