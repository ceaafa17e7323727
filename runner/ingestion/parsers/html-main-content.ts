// The main content of an HTML page: its article, without the navigation, header, footer and
// sidebars around it, so that site chrome is not indexed (nor the first chunk of every page). Found
// the way Firefox's reader view finds it: @mozilla/readability on a linkedom DOM (pure JS: no
// browser, no network, fine in a worker thread). Only a page Readability judges to be an article is
// cut down; any other (a list, a table, a form, a page of fragments) is kept whole by the caller.
import { isProbablyReaderable, Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

/**
 * Pages longer than this are kept whole, unread: a DOM takes many times its source in memory, and
 * an article is never this long (the longest on the web run to a few hundred kilobytes of HTML).
 */
export const MAX_ARTICLE_SOURCE_CHARS = 5_000_000;

/**
 * What makes a page an article: paragraphs of at least 80 characters whose lengths past that sum,
 * square-rooted, to 20 (an <article> of 500 characters alone does). Firefox asks for 140-character
 * paragraphs, which leaves many articles of short paragraphs (how-tos, notes) with their navigation.
 */
const ARTICLE_TEST = { minContentLength: 80, minScore: 20 };

export interface MainContent {
  /** The page's title as Readability reads it ('' when none). */
  title: string;
  /** The article's HTML. */
  html: string;
}

/** The page's article, or null when it has none (or reading it failed): then keep the whole page. */
export function mainContent(html: string): MainContent | null {
  if (html.length > MAX_ARTICLE_SOURCE_CHARS) return null;
  try {
    // linkedom's document implements the parts of the DOM Readability uses; its types are its own.
    const { document } = parseHTML(html) as unknown as { document: Document };
    if (!isProbablyReaderable(document, ARTICLE_TEST)) return null;
    const article = new Readability(document).parse();
    if (!article?.content || !article.textContent?.trim()) return null;
    return { title: article.title?.trim() ?? '', html: article.content };
  } catch {
    // A page the DOM or Readability chokes on still has its text: the caller keeps it whole.
    return null;
  }
}
