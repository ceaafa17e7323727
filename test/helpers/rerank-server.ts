// A small /rerank server for tests, of the kind Cohere, Jina and text-embeddings-inference serve.
// It scores documents in reverse of the order it got them (the last best), so a reranked answer is
// visibly reordered. `mode` picks its behaviour for the next requests: Cohere's answer shape, TEI's,
// an HTTP 500, an answer that never comes, a malformed answer, or an index it was not sent.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RerankMode = 'cohere' | 'tei' | 'error' | 'hang' | 'garbage' | 'badIndex';

export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n: number;
  authorization?: string | undefined;
}

export async function startRerankServer() {
  const requests: RerankRequest[] = [];
  const hanging: ServerResponse[] = [];
  const state = { mode: 'cohere' as RerankMode };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const request = JSON.parse(body || '{}') as RerankRequest;
      requests.push({ ...request, authorization: req.headers.authorization });
      const n = request.documents?.length ?? 0;
      const scores = Array.from({ length: n }, (_, index) => ({ index, score: (index + 1) / n }));
      const send = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      };
      if (state.mode === 'hang') hanging.push(res);
      else if (state.mode === 'error') send(500, { error: 'model crashed' });
      else if (state.mode === 'garbage') send(200, { results: 'nope' });
      else if (state.mode === 'badIndex') send(200, [{ index: n + 5, score: 1 }]);
      else if (state.mode === 'tei') send(200, scores);
      else send(200, { results: scores.map((s) => ({ index: s.index, relevance_score: s.score })) });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    setMode: (mode: RerankMode) => {
      state.mode = mode;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
