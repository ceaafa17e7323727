// The Content-Disposition of a download, for any name a user gave (a file's, a table's).

/** RFC 6266 / 5987: a plain ASCII fallback for old clients, and the exact name as UTF-8 in filename*. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\/%]/g, '_');
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
