/**
 * Elements built from attributes and children. Every text from the model (names, UI texts, error
 * messages, arguments) is untrusted: it only ever becomes a text node or an attribute value, never
 * markup.
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/** Attribute values: null, undefined and false leave the attribute out, true sets it empty. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

/** An element with attributes and children; strings become text nodes (never markup). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const child of children)
    if (child !== null && child !== undefined && child !== false && child !== "") node.append(child);
  return node;
}

export function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  return node;
}

export function setAttrs(node: Element, attrs?: Attrs | null): void {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? "" : String(v));
  }
}
