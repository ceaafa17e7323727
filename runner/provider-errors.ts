// How errors of OpenAI-compatible providers (chat models, embeddings) are told to users: where the
// provider is, and the message with every API key taken out. Providers echo keys back (OpenAI:
// "Incorrect API key provided: sk-ab***yz"), and these messages end up in execution logs and on
// documents that users read.

/** The provider's address as a user would recognise it: origin and path, no query or credentials. */
export function providerLocation(baseUrl: string | undefined): string {
  if (!baseUrl) return 'api.openai.com';
  try {
    const url = new URL(baseUrl);
    return url.origin + url.pathname.replace(/\/$/, '');
  } catch {
    return 'the configured base URL';
  }
}

/** The text without our key, nor anything key-shaped. */
export function redactKeys(text: string, apiKey: string | undefined): string {
  const out = apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  return out.replace(/\bsk-[A-Za-z0-9_*.-]{6,}/g, '[redacted]');
}
