// Completion-callback URLs: the form a caller may give (an absolute http(s) URL of at most 2048
// characters, without credentials) and the SSRF rule of the http block (net/network-guard.ts)
// applied as early as it can be. A literal address is judged when the execution is requested; a host
// name is judged at each delivery, on what it resolves to then (DNS answers change).
import { type AllowList, parseIp, RefusedDestinationError, vetHost } from './network-guard.ts';

export const CALLBACK_URL_MAX_LENGTH = 2048;

/** Why a text cannot be a callback URL, judging its form alone; null when it can. */
export function callbackUrlFormProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'Must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `Must be an http:// or https:// URL, not ${url.protocol}//`;
  }
  // Credentials in a URL end up in logs and admin listings; the signature authenticates callbacks.
  if (url.username || url.password) return 'Must not contain credentials (user:password@)';
  return null;
}

/**
 * Why the URL's host, when it is a literal IP address, may not be called back (loopback, private,
 * link-local, metadata…, unless the allow-list permits it); null for an allowed address or a host
 * name, which is vetted at delivery.
 */
export async function literalAddressRefusal(url: URL, allow: AllowList): Promise<string | null> {
  if (!parseIp(url.hostname)) return null;
  try {
    await vetHost(url.hostname, allow);
    return null;
  } catch (err) {
    if (err instanceof RefusedDestinationError) return err.message;
    throw err;
  }
}
