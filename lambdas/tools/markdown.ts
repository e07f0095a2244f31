/**
 * HTML to Markdown (issue 27): the content extractor's `format: "markdown"`. turndown 7.2.5 (MIT, maintained,
 * https://github.com/mixmark-io/turndown) with Joplin's GitHub Flavored Markdown plugin (@joplin/turndown-plugin-gfm
 * 1.0.68, MIT: strikethrough, task lists, highlighted code; its tables' rules are ./markdown-tables.ts, the same
 * output in linear time); we write no converter. ATX headings (`## Title`), fenced code blocks
 * with the language of a `language-*` class, `-` bullets.
 *
 * Input is the extractor's cleaned article HTML (Readability's markup, absolute URLs), so links and images come out
 * absolute. Whatever runs or styles never reaches the text: `script`, `style`, `noscript`, `template`, `iframe`,
 * `object`, `embed` and form controls are removed with their content. Runs in the tool worker with the rest of the
 * extraction (core/tool-thread.ts), whose time and memory bounds hold it; the input is at most the extractor's HTML
 * limit.
 */
import TurndownService from 'turndown';
// @ts-expect-error @joplin/turndown-plugin-gfm ships no type declarations; each export is a turndown plugin.
import { highlightedCodeBlock, strikethrough, taskListItems } from '@joplin/turndown-plugin-gfm';
import { linearTables } from './markdown-tables.ts';

/** Elements removed with everything inside them. */
const REMOVED = ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'form', 'button', 'select', 'textarea', 'input'] as const;

let service: TurndownService | null = null;

function converter(): TurndownService {
  if (service) return service;
  const t = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*', strongDelimiter: '**', linkStyle: 'inlined' });
  // The plugin's GFM rules, its tables as ./markdown-tables.ts has them (the same output in linear time).
  t.use([highlightedCodeBlock, strikethrough, taskListItems] as TurndownService.Plugin[]);
  t.use(linearTables);
  t.remove([...REMOVED] as unknown as TurndownService.Filter);
  // A line break inside a heading would end the ATX heading half-way: a space instead.
  t.addRule('breakInHeading', {
    filter: (node) => {
      if (node.nodeName !== 'BR') return false;
      for (let n = node.parentNode; n; n = n.parentNode) if (/^H[1-6]$/.test(n.nodeName)) return true;
      return false;
    },
    replacement: () => ' ',
  });
  service = t;
  return t;
}

/**
 * The Markdown of an HTML fragment (GitHub Flavored Markdown: headings, lists, tables, code blocks, links, images).
 * @param html an article's cleaned HTML (absolute URLs, as the content extractor's `html`).
 * @returns Markdown, trimmed; '' for an empty fragment.
 */
export function htmlToMarkdown(html: string): string {
  if (!html.trim()) return '';
  return converter().turndown(html).trim();
}
