// HTML: the text a reader sees, block structure kept as line and paragraph breaks, tables as aligned
// text. Links keep their words, not their URLs; images, scripts, styles and noscript fallbacks go.
// A page that is an article is cut down to it first (./html-main-content.ts), its title before it:
// navigation, headers and footers are not indexed. Any other page keeps all its text.
// Bytes are UTF-8 unless that fails, then the page's declared charset, then windows-1252 (what
// browsers assume), since old pages are often Latin-1 without saying so.
import { convert, type HtmlToTextOptions } from 'html-to-text';
import { DocumentParseError, reasonOf } from './errors.ts';
import { mainContent } from './html-main-content.ts';

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};

export function parseHtml(bytes: Uint8Array): string {
  const html = decodeHtml(bytes);
  try {
    const article = mainContent(html);
    if (!article) return convert(html, OPTIONS);
    const text = convert(article.html, OPTIONS);
    // Readability drops a heading that repeats the title: the title goes back in front, once.
    return article.title && !text.trimStart().startsWith(article.title)
      ? `${article.title}\n\n${text}`
      : text;
  } catch (error) {
    throw new DocumentParseError(`The HTML could not be read: ${reasonOf(error)}`);
  }
}

function decodeHtml(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 2048));
    const declared = /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i.exec(head)?.[1];
    try {
      return new TextDecoder(declared ?? 'windows-1252').decode(bytes);
    } catch {
      return new TextDecoder('windows-1252').decode(bytes);
    }
  }
}
