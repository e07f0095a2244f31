/**
 * Structural comparison of two domhandler trees as parse5-htmlparser2-tree-adapter builds them: node types,
 * element names and namespaces, attributes in order with their namespaces and prefixes, text and comment
 * data, doctype name and ids, the document mode, and the parent/sibling links. Used to prove the fast path
 * against parse5 (parse.ts at load, the tests, the bench).
 */
import { type AnyNode, type Document, type Element, type ProcessingInstruction, isCDATA, isComment, isDocument, isTag, isText } from 'domhandler';

function describe(node: AnyNode): string {
  if (isTag(node)) return `<${node.name}>`;
  if (isText(node)) return `#text ${JSON.stringify(node.data.slice(0, 40))}`;
  if (isComment(node)) return `#comment ${JSON.stringify(node.data.slice(0, 40))}`;
  if (isDocument(node)) return '#document';
  if (isCDATA(node)) return '#cdata';
  return `#${node.type} ${JSON.stringify((node as ProcessingInstruction).data)}`;
}

function attrTriples(el: Element): string {
  const ns = el['x-attribsNamespace'] ?? {};
  const prefix = el['x-attribsPrefix'] ?? {};
  return JSON.stringify(Object.keys(el.attribs).map((name) => [name, el.attribs[name], ns[name] ?? null, prefix[name] ?? null]));
}

/** How two nodes at the same place differ, or null when they agree (children not compared). */
function nodeDifference(a: AnyNode, b: AnyNode): string | null {
  if (a.type !== b.type || a.constructor !== b.constructor) return `node ${describe(a)} vs ${describe(b)}`;
  if (isTag(a)) {
    const e = b as Element;
    if (a.name !== e.name) return `name ${a.name} vs ${e.name}`;
    if (a.namespace !== e.namespace) return `namespace ${a.namespace} vs ${e.namespace}`;
    const x = attrTriples(a);
    const y = attrTriples(e);
    if (x !== y) return `attributes ${x} vs ${y}`;
  } else if (isText(a) || isComment(a)) {
    const other = (b as typeof a).data;
    if (a.data !== other) return `data ${JSON.stringify(a.data)} vs ${JSON.stringify(other)}`;
  } else if (isDocument(a)) {
    if (a['x-mode'] !== (b as Document)['x-mode']) return `document mode ${a['x-mode']} vs ${(b as Document)['x-mode']}`;
  } else {
    const p = a as ProcessingInstruction;
    const q = b as ProcessingInstruction;
    for (const k of ['name', 'data', 'x-name', 'x-publicId', 'x-systemId'] as const) {
      if (p[k] !== q[k]) return `doctype ${k} ${JSON.stringify(p[k])} vs ${JSON.stringify(q[k])}`;
    }
  }
  return null;
}

/**
 * The first difference between two trees, as `path: what` (the path names each node from the root with its
 * index among its parent's children, e.g. `#document > <html>[1] > <body>[1] > <p>[3]`), or null when the
 * trees are identical. Links (`parent`, `prev`, `next`) are checked to be consistent with `children`.
 */
export function treeDifference(a: AnyNode, b: AnyNode): string | null {
  // Depth-first in document order, without recursion (misnested pages can be thousands of levels deep).
  // A string on the stack is a difference to report once the children before it compared equal.
  const stack: ([AnyNode, AnyNode, string] | string)[] = [[a, b, describe(a)]];
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'string') return item;
    const [x, y, path] = item;
    const d = nodeDifference(x, y);
    if (d) return `${path}: ${d}`;
    if (!('children' in x)) continue;
    const xc = x.children;
    const yc = (y as typeof x).children;
    const n = Math.min(xc.length, yc.length);
    if (xc.length !== yc.length) {
      const extra = xc.length > yc.length ? `first: ${describe(xc[n]!)}` : `second: ${describe(yc[n]!)}`;
      stack.push(`${path}: ${xc.length} vs ${yc.length} children (the first extra one in the ${extra})`);
    }
    for (let i = n - 1; i >= 0; i--) {
      const c = xc[i]!;
      const childPath = `${path} > ${describe(c)}[${i}]`;
      if (c.parent !== x || c.prev !== (xc[i - 1] ?? null) || c.next !== (xc[i + 1] ?? null)) {
        stack.push(`${childPath}: parent/prev/next links disagree with children`);
      }
      stack.push([c, yc[i]!, childPath]);
    }
  }
  return null;
}
