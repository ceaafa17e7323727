// Serves the API's documentation without an API key and without the internet: the OpenAPI document
// at /api/openapi.json, naming this server so the samples of /docs work when pasted; the Scalar
// reference page at /docs, whose script is Scalar's standalone bundle served from node_modules (not
// a CDN), so the page works on an offline machine; and the root, /, which points a browser (an HTML
// page) or a program (JSON) at both.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Scalar } from '@scalar/hono-api-reference';
import { type Context, Hono } from 'hono';
import type { Config } from '../../config.ts';
import type { OpenApiDocument } from './document.ts';
import { ROOT_HTML, ROOT_JSON } from './root.ts';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/docs';
export const BUNDLE_PATH = '/docs/scalar.js';

// A host name, IPv4 or bracketed IPv6 address, with an optional port: what a forwarded host may be.
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The address the reader reached the API at: PUBLIC_URL when set; otherwise the request's own,
 * as a proxy in front reports it (the first X-Forwarded-Proto and X-Forwarded-Host) or, without
 * one, as the Host header gives it. A forwarded value that is not a scheme or host is ignored.
 */
export function publicOrigin(c: Context, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const own = new URL(c.req.url);
  const first = (name: string) => c.req.header(name)?.split(',')[0]?.trim();
  const proto = first('x-forwarded-proto')?.toLowerCase();
  const host = first('x-forwarded-host');
  const scheme = proto === 'http' || proto === 'https' ? proto : own.protocol.slice(0, -1);
  return `${scheme}://${host && HOST.test(host) ? host : own.host}`;
}

// The package exports no path to its browser bundle: find the package, then the bundle beside it.
const scalarDist = dirname(createRequire(import.meta.url).resolve('@scalar/api-reference'));
const BUNDLE_FILE = join(scalarDist, 'browser', 'standalone.js');

interface Bundle {
  plain: Uint8Array;
  gzipped: Uint8Array;
  version: string;
}

let bundle: Promise<Bundle> | undefined;

/** The bundle (4 MB, 1 MB gzipped), read and compressed once, on first request. */
function loadBundle(): Promise<Bundle> {
  bundle ??= (async () => {
    const [plain, pkg] = await Promise.all([
      readFile(BUNDLE_FILE),
      readFile(join(scalarDist, '..', 'package.json'), 'utf8'),
    ]);
    return {
      plain,
      gzipped: await promisify(gzip)(plain),
      version: (JSON.parse(pkg) as { version: string }).version,
    };
  })();
  // A failed read is retried by the next request rather than remembered.
  bundle.catch(() => {
    bundle = undefined;
  });
  return bundle;
}

/** The bundle's version, in its URL: a new version is a new URL, so browsers may keep it for good. */
async function bundleUrl(): Promise<string> {
  return `${BUNDLE_PATH}?v=${(await loadBundle()).version}`;
}

/** The pages; `document` gives the API's document (generated once the app's routes are all in). */
export function openApiRoutes(config: Pick<Config, 'PUBLIC_URL'>, document: () => OpenApiDocument) {
  return new Hono()
    .get('/', (c) => {
      // The answer depends on Accept: caches must keep the two apart.
      c.header('Vary', 'Accept');
      return /\btext\/html\b/i.test(c.req.header('accept') ?? '') ? c.html(ROOT_HTML) : c.json(ROOT_JSON);
    })
    .get(OPENAPI_PATH, (c) => {
      const { openapi, info, ...rest } = document();
      const servers = [{ url: publicOrigin(c, config.PUBLIC_URL), description: 'This service' }];
      return c.json({ openapi, info, servers, ...rest });
    })
    .get(
      DOCS_PATH,
      Scalar(async () => ({
        url: OPENAPI_PATH,
        cdn: await bundleUrl(),
        pageTitle: 'Workflow service API reference',
        // Nothing leaves the machine: no web fonts, no telemetry, no AI agent, no hosted tools.
        withDefaultFonts: false,
        telemetry: false,
        agent: { disabled: true },
        mcp: { disabled: true },
        showDeveloperTools: 'never',
        documentDownloadType: 'json',
      })),
    )
    .get(BUNDLE_PATH, async (c) => {
      const { plain, gzipped } = await loadBundle();
      const gzipOk = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
      const body = gzipOk ? gzipped : plain;
      return c.body(body as Uint8Array<ArrayBuffer>, 200, {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=31536000, immutable',
        Vary: 'Accept-Encoding',
        'Content-Length': String(body.byteLength),
        ...(gzipOk ? { 'Content-Encoding': 'gzip' } : {}),
      });
    });
}
