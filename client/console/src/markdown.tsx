// Markdown from an LLM, shown safely: rendered by marked, then cleaned by DOMPurify (no script,
// no event handler, no style attribute the CSP would refuse, no form or frame), so the text of a
// model is never live HTML.
import DOMPurify, { type Config } from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

const PURIFY: Config = {
  USE_PROFILES: { html: true },
  // No images: one would call a third party as the reader opens the report (and the CSP refuses them).
  FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset'],
  ALLOWED_URI_REGEXP: /^(?:https?:|#)/i,
};

/** Sanitised HTML of a markdown text; marked's own HTML pass-through is cleaned like the rest. */
export const safeMarkdownHtml = (markdown: string): string => {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return DOMPurify.sanitize(html, PURIFY);
};

export const Markdown = ({ text, testId }: { text: string; testId?: string }) => {
  const html = useMemo(() => safeMarkdownHtml(text), [text]);
  // The one place the console sets HTML: the output of DOMPurify above, never raw model text.
  return <div className="markdown" data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />;
};
