// Serves a Hono app on a port with Node's HTTP server and resolves once it is listening.
import { type ServerType, serve } from '@hono/node-server';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

export function listen(
  app: { fetch: (req: Request) => Response | Promise<Response> },
  port: number,
  hostname: string,
) {
  return new Promise<Listening>((resolve, reject) => {
    let server: ServerType;
    const onError = (err: Error) => reject(err);
    server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      server.off('error', onError);
      const host = hostname === '0.0.0.0' || hostname === '::' ? '127.0.0.1' : hostname;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
    server.once('error', onError);
  });
}
