// The admin console's built files on the admin port: index.html at / and at each page's address
// (the page routes itself), the content-hashed files under /assets cached for a year. Until a build
// exists, those addresses answer 503 with a page that says how to make one (or that one is running).
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { type Context, Hono } from 'hono';
import { CONSOLE_DIST, type ConsoleBuild } from './build.ts';
import { CONSOLE_PAGES } from './pages.ts';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

// Everything the page loads comes from this port: nothing from a CDN, no inline script.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

// Vite names its files <name>-<hash>.<ext>, flat in assets/: anything else is not ours.
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function consoleRoutes(options: { dir?: string; build?: ConsoleBuild | undefined } = {}) {
  const dir = options.dir ?? CONSOLE_DIST;
  const app = new Hono();

  app.get('/assets/:file', async (c) => {
    const file = c.req.param('file');
    const bytes = ASSET_NAME.test(file) ? await readFile(join(dir, 'assets', file)).catch(() => null) : null;
    if (!bytes) return c.json({ error: `No console asset ${file}` }, 404);
    return c.body(new Uint8Array(bytes), 200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      // The name changes with the content, so a browser never needs to ask again.
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    });
  });

  const page = async (c: Context) => {
    const html = await readFile(join(dir, 'index.html'), 'utf8').catch(() => null);
    if (html === null) return unavailable(c, options.build?.state === 'building');
    return c.html(html, 200, {
      // Always asked again: a new build names new assets.
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
  };
  app.get('/', page);
  for (const name of CONSOLE_PAGES) {
    app.get(`/${name}`, page);
    app.get(`/${name}/*`, page);
  }
  return app;
}

function unavailable(c: Context, building: boolean) {
  const text = building
    ? '<p>The admin console is being built (its files were missing at start-up). This page reloads by itself.</p>'
    : '<p>The admin console has not been built. In the service’s directory run</p><pre>npm run build</pre>' +
      '<p>(or <code>npm install</code>, which builds it too), then reload this page. The admin API at ' +
      '<code>/trpc</code> works without it.</p>';
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Admin console unavailable</title>${
      building ? '<meta http-equiv="refresh" content="3">' : ''
    }<style>body{font:15px system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}` +
      'pre{background:#f3f3f3;padding:.6rem 1rem}</style></head><body><h1>Admin console unavailable</h1>' +
      `${text}</body></html>`,
    503,
    { 'Retry-After': building ? '3' : '60', 'Cache-Control': 'no-store' },
  );
}
