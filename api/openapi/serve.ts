// Serves the API's documentation without an API key and without the internet: the OpenAPI document
// at /api/openapi.json, and the Scalar reference page at /docs, whose script is Scalar's standalone
// bundle served from node_modules (not a CDN), so the page works on an offline machine.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Scalar } from '@scalar/hono-api-reference';
import { Hono } from 'hono';
import { openApiDocument } from './document.ts';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/docs';
export const BUNDLE_PATH = '/docs/scalar.js';

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

export function openApiRoutes() {
  return new Hono()
    .get(OPENAPI_PATH, (c) => c.json(openApiDocument()))
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
