// Serves a Hono app on a port with Node's HTTP server and resolves once it is listening. A port or
// address that cannot be had is a ConfigError: one line naming the variable that sets it.
import { type ServerType, serve } from '@hono/node-server';
import { ConfigError, exitOnConfigError } from '../config.ts';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** The variables that set a listener's port and address, named when it cannot listen. */
export interface ListenVariables {
  port: 'PORT' | 'ADMIN_PORT' | 'METRICS_PORT';
  host: 'HOST' | 'ADMIN_HOST' | 'METRICS_HOST';
}

export function listen(
  app: { fetch: (req: Request) => Response | Promise<Response> },
  port: number,
  hostname: string,
  variables: ListenVariables = { port: 'PORT', host: 'HOST' },
) {
  return new Promise<Listening>((resolve, reject) => {
    let server: ServerType;
    const onError = (err: Error) => reject(listenError(err, port, hostname, variables));
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

/** listen() for an entry point: a port or address it cannot have is one line and exit 1. */
export function listenOrExit(
  app: { fetch: (req: Request) => Response | Promise<Response> },
  port: number,
  hostname: string,
  variables?: ListenVariables,
): Promise<Listening> {
  return listen(app, port, hostname, variables).catch(exitOnConfigError);
}

function listenError(err: Error, port: number, host: string, v: ListenVariables): Error {
  const where = `${v.port}=${port}, ${v.host}=${host}`;
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `Port ${port} is already in use (${where}): stop what listens there, or set ${v.port} to another port (0 picks a free one)`,
      );
    case 'EACCES':
      return new ConfigError(
        `Port ${port} needs privileges this process lacks (${where}): set ${v.port} to a port above 1023`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ConfigError(
        `Cannot listen on ${host} (${where}): no such address on this machine; set ${v.host} to one of its addresses, or 0.0.0.0`,
      );
    default:
      return err;
  }
}
