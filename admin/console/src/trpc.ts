// The console's line to the admin plane: the typed tRPC client over /trpc (batched), the bearer
// token kept in session storage (entered once per tab), the query client the pages share, and how an
// error reads (message, HTTP status, the zod issues with their paths).
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AdminRouter } from '../../router.ts';

export type Outputs = inferRouterOutputs<AdminRouter>;
export type Inputs = inferRouterInputs<AdminRouter>;

const TOKEN_KEY = 'wfs-admin:token';

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** A client that sends the given token (the sign-in form tries one before keeping it). */
export function adminClient(token: () => string | null) {
  return createTRPCClient<AdminRouter>({
    links: [
      httpBatchLink({
        url: '/trpc',
        headers: () => {
          const t = token();
          return t ? { authorization: `Bearer ${t}` } : {};
        },
      }),
    ],
  });
}

/** The client of the signed-in tab. */
export const trpc = adminClient(session.token);

export interface Issue {
  code: string;
  path: (string | number)[];
  message: string;
}

export interface ErrorInfo {
  message: string;
  status: number | null;
  details: Issue[];
}

/** What a failed call says: the admin plane's message and, on a 400, the issues at their paths. */
export function errorInfo(err: unknown): ErrorInfo {
  if (err instanceof TRPCClientError) {
    const data = (err.data ?? {}) as { httpStatus?: number; details?: Issue[] };
    return { message: err.message, status: data.httpStatus ?? null, details: data.details ?? [] };
  }
  if (err instanceof Error) return { message: err.message, status: null, details: [] };
  return { message: String(err), status: null, details: [] };
}

export const isUnauthorized = (err: unknown) => errorInfo(err).status === 401;

// A refused token anywhere signs the tab out; the app listens and shows the sign-in form with why.
type SignedOut = (message: string) => void;
const signedOutListeners = new Set<SignedOut>();
export function onSignedOut(listener: SignedOut) {
  signedOutListeners.add(listener);
  return () => {
    signedOutListeners.delete(listener);
  };
}
function refused(err: unknown) {
  if (!isUnauthorized(err)) return;
  session.signOut();
  for (const listener of signedOutListeners) listener(errorInfo(err).message);
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: refused }),
  mutationCache: new MutationCache({ onError: refused }),
  defaultOptions: {
    queries: {
      // A 4xx will say the same thing again; a dropped connection may not.
      retry: (count, err) => count < 2 && (errorInfo(err).status ?? 500) >= 500,
      refetchOnWindowFocus: false,
      staleTime: 2000,
    },
  },
});
