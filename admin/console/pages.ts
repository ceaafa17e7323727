// The console's pages by address. The page routes itself in the browser; the admin plane answers
// index.html at each of these addresses (and below them), so a reload or a shared link works.
export const CONSOLE_PAGES = ['overview', 'executions', 'workflows', 'keys', 'quotas', 'knowledge'] as const;

export type ConsolePage = (typeof CONSOLE_PAGES)[number];
