/**
 * axe-core's image-alt rule, which Lighthouse's SEO category includes (accessibility/image-alt): every rendered
 * image has a text alternative or a presentational role.
 */
import type { Element } from 'domhandler';
import { resolveUrl } from '../../engine/page-facts.ts';
import { audit, snippet } from './audit.ts';
import type { ImageElement } from './reading.ts';
import { foldSpace, textContent } from './text.ts';
import type { AuditItem, SeoAudit } from './types.ts';

/**
 * axe-core image-alt (Lighthouse accessibility/image-alt): an image needs a text alternative or a presentational role.
 * @param images the page's images; hidden ones are out of scope (none in scope: not applicable).
 * @param ids the page's elements by id (for `aria-labelledby`; may be empty when no image has one).
 * @param baseUrl the document base URL (the failing images' `src` resolve against it).
 */
export function auditImageAlt(images: ImageElement[], ids: Map<string, Element>, baseUrl: string): SeoAudit {
  const inScope = images.filter((img) => !img.hidden);
  if (!inScope.length) return audit('image-alt', true, null, [], false);
  const failing: AuditItem[] = [];
  // Whether each labelling element has text, read once per element (a million images may name the same one).
  const labelled = new Map<Element, boolean>();
  const hasText = (target: Element): boolean => {
    let has = labelled.get(target);
    if (has === undefined) labelled.set(target, (has = foldSpace(textContent(target)) !== ''));
    return has;
  };
  for (const { el } of inScope) {
    const a = el.attribs;
    const role = (a.role ?? '').trim().toLowerCase().split(/\s+/)[0];
    const labelledBy = (a['aria-labelledby'] ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .some((id) => {
        const target = ids.get(id);
        return target !== undefined && hasText(target);
      });
    const hasName = a.alt !== undefined || (a['aria-label'] ?? '').trim() !== '' || labelledBy || (a.title ?? '').trim() !== '' || role === 'none' || role === 'presentation';
    const altIsOnlySpace = a.alt !== undefined && /^\s+$/.test(a.alt);
    if (!hasName || altIsOnlySpace) {
      failing.push({ node: snippet(el), src: a.src !== undefined ? (resolveUrl(a.src, baseUrl) ?? a.src) : '' });
    }
  }
  if (!failing.length) return audit('image-alt', true);
  return audit('image-alt', false, `${failing.length} image${failing.length === 1 ? '' : 's'} without a text alternative`, failing.slice(0, 50));
}
