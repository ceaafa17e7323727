// Embedders: the local lexical model (deterministic, unit length, similar for shared words), the OpenAI
// provider against a local OpenAI-compatible server (batching, order, normalisation, retries, errors),
// and which models a configuration makes available.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { EMBEDDING_DIMENSIONS } from '../../runner/embeddings/embedder.ts';
import { createEmbedders, type EmbeddingConfig } from '../../runner/embeddings/index.ts';
import { embedLocal, LOCAL_EMBEDDING_MODEL } from '../../runner/embeddings/local.ts';
import { createOpenAIEmbedder } from '../../runner/embeddings/openai.ts';
import { rawEmbedding, startEmbeddingServer } from '../helpers/openai-server.ts';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);
const norm = (v: Float32Array) => Math.sqrt(cosine(v, v));

function normalised(values: number[]): Float32Array {
  const vector = Float32Array.from(values);
  const length = norm(vector);
  return vector.map((x) => x / length);
}

describe('local embedding', () => {
  it('is deterministic, 1536-dimensional and unit length', () => {
    const a = embedLocal('The quick brown fox jumps over the lazy dog.');
    const b = embedLocal('The quick brown fox jumps over the lazy dog.');
    expect(a).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(a).toEqual(b);
    expect(norm(a)).toBeCloseTo(1, 5);
  });

  it('keeps its scheme: these values change only with a new model name', () => {
    const vector = embedLocal('hello world');
    const nonZero = [...vector.entries()]
      .filter(([, x]) => x !== 0)
      .map(([i, x]) => [i, Number(x.toFixed(4))]);
    expect(LOCAL_EMBEDDING_MODEL).toBe('local-hashed-ngrams-v1');
    // Two unigrams (weight 1), one bigram (0.5), ten trigrams (0.25), no collision; scaled by 1/√2.875.
    expect(nonZero).toEqual([
      [295, 0.1474],
      [469, -0.1474],
      [673, 0.1474],
      [690, 0.2949],
      [695, -0.1474],
      [705, -0.1474],
      [800, -0.1474],
      [830, -0.5898],
      [974, -0.1474],
      [1026, 0.1474],
      [1063, -0.1474],
      [1263, 0.5898],
      [1323, -0.1474],
    ]);
  });

  it('is closer for texts that share words than for unrelated ones', () => {
    const query = embedLocal('How do I reset my password?');
    const related = embedLocal('To reset your password, open settings and choose "reset password".');
    const unrelated = embedLocal('The museum opens at nine on weekdays.');
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.2);
    // Word pieces count too: an inflected form is nearer than an unrelated word.
    expect(cosine(embedLocal('invoices'), embedLocal('invoice'))).toBeGreaterThan(
      cosine(embedLocal('invoices'), embedLocal('weather')),
    );
  });

  it('ignores case and Unicode compatibility forms', () => {
    expect(embedLocal('ＨＥＬＬＯ World')).toEqual(embedLocal('hello world'));
  });

  it('gives a text without words a fixed unit vector, never a zero one', () => {
    for (const text of ['', '   ', '!!! ???']) {
      const vector = embedLocal(text);
      expect(vector[0]).toBe(1);
      expect(norm(vector)).toBe(1);
    }
  });

  it('treats CJK characters as words', () => {
    expect(cosine(embedLocal('東京の天気'), embedLocal('東京の地図'))).toBeGreaterThan(
      cosine(embedLocal('東京の天気'), embedLocal('大阪城')),
    );
  });
});

describe('OpenAI embedder', () => {
  let server: Awaited<ReturnType<typeof startEmbeddingServer>>;

  beforeAll(async () => {
    server = await startEmbeddingServer();
  });

  afterAll(() => server.close());

  it('embeds in batches, in order, normalised, with the model, dimensions and key', async () => {
    const from = server.requests.length;
    const embedder = createOpenAIEmbedder({ baseUrl: server.url, apiKey: 'sk-test-key', batchSize: 2 });
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const vectors = await embedder.embedDocuments(texts);
    const requests = server.requests.slice(from);
    expect(embedder.model).toBe('text-embedding-3-small');
    expect(requests.map((r) => r.input)).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    for (const request of requests) {
      expect(request).toMatchObject({
        model: 'text-embedding-3-small',
        dimensions: 1536,
        encoding_format: 'base64',
        authorization: 'Bearer sk-test-key',
      });
    }
    expect(vectors).toHaveLength(5);
    vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(norm(vector)).toBeCloseTo(1, 5);
      expect(vector).toEqual(normalised(rawEmbedding(texts[i] as string)));
    });
  });

  it('embeds a query, sending newlines as they are', async () => {
    const embedder = createOpenAIEmbedder({ baseUrl: server.url, model: 'my-embedder' });
    const vector = await embedder.embedQuery('line one\nline two');
    expect(server.requests.at(-1)).toMatchObject({ model: 'my-embedder', input: 'line one\nline two' });
    expect(vector).toEqual(normalised(rawEmbedding('line one\nline two')));
  });

  it('retries a server error', async () => {
    const from = server.requests.length;
    server.failNext(1, 500);
    const embedder = createOpenAIEmbedder({ baseUrl: server.url, maxRetries: 2 });
    const [vector] = await embedder.embedDocuments(['retry me']);
    expect(server.requests.length - from).toBe(2);
    expect(vector).toEqual(normalised(rawEmbedding('retry me')));
  });

  it('reports a rejected key without showing it', async () => {
    server.failNext(1, 401);
    const embedder = createOpenAIEmbedder({ baseUrl: server.url, apiKey: 'sk-secret-key-123456' });
    const error = await embedder.embedQuery('x').catch((e: Error) => e);
    expect((error as Error).message).toMatch(/rejected the API key \(HTTP 401\)/);
    expect((error as Error).message).not.toContain('sk-secret');
  });

  it('stops waiting when cancelled', async () => {
    const embedder = createOpenAIEmbedder({ baseUrl: server.url });
    const controller = new AbortController();
    controller.abort(new Error('cancelled here'));
    await expect(embedder.embedDocuments(['x'], controller.signal)).rejects.toThrow('cancelled here');
  });

  it('accepts a server that answers floats whatever was asked', async () => {
    const floats = await startEmbeddingServer({ alwaysFloat: true });
    try {
      const embedder = createOpenAIEmbedder({ baseUrl: floats.url });
      expect(await embedder.embedDocuments(['float'])).toEqual([normalised(rawEmbedding('float'))]);
    } finally {
      await floats.close();
    }
  });

  it('refuses vectors of another size', async () => {
    const small = await startEmbeddingServer({ dimensions: 768 });
    try {
      const embedder = createOpenAIEmbedder({ baseUrl: small.url });
      await expect(embedder.embedDocuments(['x'])).rejects.toThrow(
        /768 dimensions; this service stores 1536/,
      );
    } finally {
      await small.close();
    }
  });
});

describe('createEmbedders', () => {
  const config = (overrides: Partial<EmbeddingConfig>): EmbeddingConfig => ({
    EMBEDDING_MODEL: 'text-embedding-3-small',
    ...overrides,
  });

  it('offers only the local model without a provider, and defaults to it', () => {
    const embedders = createEmbedders(config({}));
    expect(embedders.models).toEqual([LOCAL_EMBEDDING_MODEL]);
    expect(embedders.defaultModel).toBe(LOCAL_EMBEDDING_MODEL);
    const error = (() => {
      try {
        embedders.get('text-embedding-3-small');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 503 });
    expect((error as Error).message).toMatch(/Embedding model text-embedding-3-small is not available/);
  });

  it('defaults to OpenAI when a key is set, to local with only a base URL', () => {
    const keyed = createEmbedders(config({ OPENAI_API_KEY: 'sk-x' }));
    expect(keyed.defaultModel).toBe('text-embedding-3-small');
    expect(keyed.models).toEqual([LOCAL_EMBEDDING_MODEL, 'text-embedding-3-small']);
    const local = createEmbedders(
      config({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', EMBEDDING_MODEL: 'nomic' }),
    );
    expect(local.defaultModel).toBe(LOCAL_EMBEDDING_MODEL);
    expect(local.get('nomic').model).toBe('nomic');
  });

  it('follows EMBEDDING_PROVIDER when set', () => {
    expect(
      createEmbedders(config({ OPENAI_API_KEY: 'sk-x', EMBEDDING_PROVIDER: 'local' })).defaultModel,
    ).toBe(LOCAL_EMBEDDING_MODEL);
    expect(
      createEmbedders(config({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', EMBEDDING_PROVIDER: 'openai' }))
        .defaultModel,
    ).toBe('text-embedding-3-small');
  });

  it('embeds documents through the given batch function and queries inline', async () => {
    const batches: string[][] = [];
    const embedders = createEmbedders(config({}), {
      embedLocalBatch: async (texts) => {
        batches.push(texts);
        return texts.map(embedLocal);
      },
    });
    const local = embedders.get(LOCAL_EMBEDDING_MODEL);
    expect(await local.embedDocuments(['a b', 'c d'])).toEqual([embedLocal('a b'), embedLocal('c d')]);
    expect(await local.embedQuery('a b')).toEqual(embedLocal('a b'));
    expect(batches).toEqual([['a b', 'c d']]);
  });

  it('embeds the OpenAI model through the configured server', async () => {
    const server = await startEmbeddingServer();
    try {
      const embedders = createEmbedders(config({ OPENAI_BASE_URL: server.url }));
      const vector = await embedders.get('text-embedding-3-small').embedQuery('hello');
      expect(vector).toEqual(normalised(rawEmbedding('hello')));
      expect(server.requests[0]?.authorization).toBe('Bearer not-needed');
    } finally {
      await server.close();
    }
  });
});
