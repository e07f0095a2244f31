/**
 * Step 1 of the detection (detect.ts): everything the patterns are tested on, read from the page once, each
 * input capped ({@link LIMITS}): headers, cookies, meta, script URLs (resolved against the document base URL),
 * inline scripts and styles, the body's text, the HTML, and an index of the document for the `dom` selectors.
 */
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';
import { parseHtml } from '../../engine/html/parse.ts';
import { documentBaseUrl, isHtmlResponse, resolveUrl } from '../../engine/page-facts.ts';
import { boundedText, type ToolPage } from '../page.ts';
import { clip, LIMITS } from './limits.ts';

/** Whether a literal occurs in the value a pattern is about to be tested on. */
export type Has = (literal: string) => boolean;

/** Everything the patterns are tested on, read from the page once. */
export interface PageInputs {
  url: string;
  headers: Array<[string, string]>;
  cookies: Array<[string, string]>;
  meta: Map<string, string[]>;
  scriptSrc: string[];
  scripts: string;
  css: string;
  text: string;
  html: string;
  docIndex: DocIndex | null;
  globals: Record<string, string | number | boolean> | null;
  /** Which scanner literals each large input holds (computed on first use). */
  literals: Partial<Record<'html' | 'scripts' | 'css' | 'text', Has>>;
}

/** What a document has, for the `dom` pre-filter and walk (all lower case). */
export interface DocIndex {
  tags: Set<string>;
  /** Class names. */
  classes: Set<string>;
  /** Attribute name to the distinct values it has on any element. */
  values: Map<string, Set<string>>;
  /** Attribute name to whether a string occurs in one of its values (built on first use). */
  contains: Map<string, Has>;
  /** The elements, in document order. */
  elements: Element[];
}

/** Block elements whose end separates text, as `innerText` does with line breaks. */
const BLOCKS = new Set(['address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre',
  'section', 'table', 'td', 'th', 'tr', 'ul', 'option', 'title']);
/** Elements whose content is not rendered text. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head']);

/** The cookies of `Set-Cookie` headers: name (lower case) and value. */
function parseCookies(setCookies: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const header of setCookies.slice(0, LIMITS.cookies)) {
    const pair = header.split(';', 1)[0] ?? '';
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).trim().toLowerCase();
    if (!name) continue;
    out.push([name, clip(eq < 0 ? '' : pair.slice(eq + 1).trim(), LIMITS.valueChars)]);
  }
  return out;
}

/** Reads every input from the page (step 1 of detect.ts's module comment); a page that is not HTML (engine/page-facts.ts's isHtmlResponse) gives its headers, cookies and URL only. */
export function readPage(page: ToolPage): PageInputs {
  const raw = typeof page.html === 'string' ? page.html : '';
  const isHtml = isHtmlResponse(page.contentType || '', raw);
  const headers = Object.entries(page.headers ?? {}).map(([k, v]): [string, string] => [k.toLowerCase(), clip(String(v), LIMITS.valueChars)]);
  if (!headers.some(([k]) => k === 'set-cookie') && page.setCookies?.length) headers.push(['set-cookie', clip(page.setCookies.join(', '), LIMITS.valueChars)]);
  const inputs: PageInputs = {
    url: page.url ?? '',
    headers,
    cookies: parseCookies(page.setCookies ?? []),
    meta: new Map(),
    scriptSrc: [],
    scripts: '',
    css: '',
    text: '',
    html: '',
    docIndex: null,
    globals: page.rendered ? page.rendered.globals ?? {} : null,
    literals: {},
  };
  if (!isHtml || !raw) return inputs;

  inputs.html = raw.length > LIMITS.htmlHeadChars + LIMITS.htmlTailChars
    ? `${raw.slice(0, LIMITS.htmlHeadChars)}\n${raw.slice(raw.length - LIMITS.htmlTailChars)}`
    : raw;
  let doc: Document;
  try {
    doc = parseHtml(clip(raw, LIMITS.domChars));
  } catch {
    return inputs;
  }

  const base = documentBaseUrl(doc, page.url ?? '');
  const tags = new Set<string>();
  const classes = new Set<string>();
  const values = new Map<string, Set<string>>();
  const elements: Element[] = [];
  const srcs = new Set<string>();
  const scripts: string[] = [];
  let scriptChars = 0;
  const styles: string[] = [];
  let styleChars = 0;
  let metaCount = 0;
  const text: string[] = [];
  let textChars = 0;

  // One walk, iterative (a deeply nested page must not overflow the stack).
  const stack: Array<{ node: AnyNode; inText: boolean } | { end: string }> = [{ node: doc, inText: false }];
  while (stack.length) {
    const item = stack.pop()!;
    if ('end' in item) {
      if (textChars < LIMITS.textChars) text.push('\n');
      continue;
    }
    const { node, inText } = item;
    if (isText(node)) {
      if (inText && textChars < LIMITS.textChars) {
        text.push(node.data);
        textChars += node.data.length;
      }
      continue;
    }
    if (isTag(node)) {
      const name = node.name.toLowerCase();
      tags.add(name);
      elements.push(node);
      for (const key in node.attribs) {
        const value = node.attribs[key]!.toLowerCase();
        const attr = key.toLowerCase(); // SVG's are camelCase (viewBox) after tree construction
        const set = values.get(attr);
        if (set) set.add(value);
        else values.set(attr, new Set([value]));
        if (attr === 'class') for (const c of value.split(/[ \t\n\f\r]+/)) if (c) classes.add(c);
      }
      if (name === 'meta' && metaCount < LIMITS.metaTags) {
        const key = (node.attribs.name || node.attribs.property || '').toLowerCase();
        if (key) {
          metaCount++;
          const content = clip(node.attribs.content ?? '', LIMITS.valueChars);
          const list = inputs.meta.get(key);
          if (list) list.push(content);
          else inputs.meta.set(key, [content]);
        }
      } else if (name === 'script') {
        const src = node.attribs.src;
        if (src !== undefined) {
          const abs = scriptUrl(src.trim(), base);
          if (abs && !abs.startsWith('data:') && srcs.size < LIMITS.scriptSrcs) srcs.add(clip(abs, LIMITS.valueChars));
        } else if (scriptChars < LIMITS.inlineScriptChars) {
          // Bounded: a script in SVG may hold elements, nested 500 deep in others.
          const body = boundedText(node, LIMITS.inlineScriptChars - scriptChars, LIMITS.inlineScriptChars);
          scripts.push(body);
          scriptChars += body.length + 1;
        }
      } else if (name === 'style' && styleChars < LIMITS.cssChars) {
        const body = boundedText(node, LIMITS.cssChars - styleChars, LIMITS.cssChars);
        styles.push(body);
        styleChars += body.length + 1;
      }
      const childInText = (inText || name === 'body') && !NOT_TEXT.has(name);
      if (BLOCKS.has(name) && childInText) stack.push({ end: name });
      for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, inText: childInText });
      continue;
    }
    if ('children' in node) {
      const children = (node as Document).children;
      for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, inText });
    }
  }
  inputs.scriptSrc = [...srcs];
  inputs.scripts = clip(scripts.join('\n'), LIMITS.inlineScriptChars);
  inputs.css = clip(styles.join('\n'), LIMITS.cssChars);
  inputs.text = clip(text.join('').replace(/[ \t\r\f\v\u00a0]+/g, ' ').replace(/ ?\n[\s]*/g, '\n').trim(), LIMITS.textChars);
  inputs.docIndex = { tags, classes, values, contains: new Map(), elements };
  return inputs;
}

/**
 * A script's URL as the `scriptSrc` patterns see it: resolved against the document base URL; as written when it
 * does not resolve (then still tested), null when it is empty.
 */
function scriptUrl(src: string, base: string): string | null {
  return resolveUrl(src, base || undefined) ?? (src || null);
}
