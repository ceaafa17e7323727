// The one error a parser throws: its message is the reason shown to the user on a failed document.
export class DocumentParseError extends Error {
  override name = 'DocumentParseError';
}

/** A library's error message, cut to one short line fit for a user-facing reason. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n', 1)[0]?.trim() || 'unknown error';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
