// Markdown from an LLM, shown safely: rendered by marked with any raw HTML in it escaped (shown
// as text), then cleaned by DOMPurify (no script, no event handler, no style attribute the CSP
// would refuse, no form or frame), so the text of a model is never live HTML.
import DOMPurify, { type Config } from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'react';

const PURIFY: Config = {
  USE_PROFILES: { html: true },
  // No images: one would call a third party as the reader opens the report (and the CSP refuses them).
  FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset'],
  ALLOWED_URI_REGEXP: /^(?:https?:|#)/i,
};

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);

/**
 * Raw HTML in the markdown is escaped rather than passed through: an `<img onerror>` never even
 * reaches DOMPurify's parser (Chrome reports its handler to the CSP there, though it never runs).
 */
const markdown = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => escapeHtml(text) } });

/** Sanitised HTML of a markdown text. */
export const safeMarkdownHtml = (source: string): string => {
  const html = markdown.parse(source, { async: false });
  return DOMPurify.sanitize(html, PURIFY);
};

export const Markdown = ({ text, testId }: { text: string; testId?: string }) => {
  const html = useMemo(() => safeMarkdownHtml(text), [text]);
  // The one place the console sets HTML: the output of DOMPurify above, never raw model text.
  return <div className="markdown" data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />;
};
