/**
 * The page's outline and navigation: headings by level, links, menus (from `<nav>`, `<menu>` and
 * ARIA navigation, nested as on the page) and `<meta>` metadata.
 */
import { type HTMLElement, collapseWhitespace, isElement, tagOf, visibleText } from '../dom';
import { OrderedSet, type Page, isWebUrl } from './page';

export type HeadingLevel = 'h1' | 'h2' | 'h3' | 'h4' | 'h5' | 'h6';
export type Headings = Record<HeadingLevel, string[]>;

export function headings(page: Page): Headings {
  const out: Headings = { h1: [], h2: [], h3: [], h4: [], h5: [], h6: [] };
  for (const el of page.body.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const text = visibleText(el);
    if (text) out[tagOf(el) as HeadingLevel].push(text);
  }
  return out;
}

/** Web links of the page, absolute, without fragments, deduplicated; links back to the page itself are left out. */
export function links(page: Page): string[] {
  const found = new OrderedSet();
  const self = page.url.split('#')[0];
  for (const a of page.root.querySelectorAll('a[href], area[href]')) {
    const url = page.resolve(a.getAttribute('href'))?.split('#')[0];
    if (isWebUrl(url) && url !== self) found.add(url);
  }
  return found.values;
}

export interface MenuItem {
  text: string;
  url?: string;
  items?: MenuItem[];
}

export interface Menu {
  label?: string;
  items: MenuItem[];
}

const MENU_SELECTOR = 'nav, menu, [role="navigation"], [role="menubar"], [role="menu"]';
const LIST_TAGS: ReadonlySet<string> = new Set(['ul', 'ol', 'menu']);
const isList = (el: HTMLElement): boolean => LIST_TAGS.has(tagOf(el));

/** The lists of a container that are not inside another list of it. */
function topLists(container: HTMLElement): HTMLElement[] {
  const lists: HTMLElement[] = [];
  const walk = (el: HTMLElement): void => {
    for (const child of el.childNodes) {
      if (!isElement(child)) continue;
      if (isList(child)) lists.push(child);
      else walk(child);
    }
  };
  walk(container);
  return lists;
}

/** The first link of a list item that is not inside one of its nested lists. */
function ownLink(el: HTMLElement): HTMLElement | undefined {
  for (const child of el.childNodes) {
    if (!isElement(child) || isList(child)) continue;
    if (tagOf(child) === 'a' && child.hasAttribute('href')) return child;
    const found = ownLink(child);
    if (found) return found;
  }
  return undefined;
}

function linkItem(a: HTMLElement, page: Page): MenuItem | undefined {
  const text = visibleText(a);
  const url = page.resolve(a.getAttribute('href'));
  if (!text) return undefined;
  return url ? { text, url } : { text };
}

/** Menu entries in page order: list items (nested as on the page) and links that stand outside lists. */
function menuItems(container: HTMLElement, page: Page): MenuItem[] {
  const items: MenuItem[] = [];
  const walk = (el: HTMLElement): void => {
    for (const child of el.childNodes) {
      if (!isElement(child)) continue;
      if (isList(child)) for (const item of listItems(child, page)) items.push(item);
      else if (tagOf(child) === 'a' && child.hasAttribute('href')) {
        const item = linkItem(child, page);
        if (item) items.push(item);
      } else walk(child);
    }
  };
  if (isList(container)) return listItems(container, page);
  walk(container);
  return items;
}

function listItems(list: HTMLElement, page: Page): MenuItem[] {
  const items: MenuItem[] = [];
  for (const li of list.childNodes) {
    if (!isElement(li) || tagOf(li) !== 'li') continue;
    const nested = topLists(li);
    const text = visibleText(li, { skip: LIST_TAGS });
    const anchor = ownLink(li);
    const children = nested.flatMap((sub) => listItems(sub, page));
    if (!text && children.length === 0) continue;
    const item: MenuItem = { text };
    const url = page.resolve(anchor?.getAttribute('href'));
    if (url) item.url = url;
    if (children.length > 0) item.items = children;
    items.push(item);
  }
  return items;
}

function menuLabel(el: HTMLElement, page: Page): string | undefined {
  const label = el.getAttribute('aria-label')?.trim();
  if (label) return label;
  const labelledBy = el.getAttribute('aria-labelledby')?.split(/\s+/)[0];
  const labelEl = labelledBy ? page.root.getElementById(labelledBy) : null;
  const heading = labelEl ?? el.querySelector('h1, h2, h3, h4, h5, h6');
  return (heading ? visibleText(heading) : '') || undefined;
}

export function menus(page: Page): Menu[] {
  const out: Menu[] = [];
  const containers = page.body.querySelectorAll(MENU_SELECTOR);
  for (const el of containers) {
    // A menu inside another menu container is part of that one.
    if (el.parentNode?.closest(MENU_SELECTOR)) continue;
    const items = menuItems(el, page);
    if (items.length === 0) continue;
    const label = menuLabel(el, page);
    out.push(label ? { label, items } : { items });
  }
  return out;
}

export type Metadata = Record<string, string | string[]>;

/** `<meta name|property|http-equiv>` values by lower-cased key (repeated keys become arrays), plus the title. */
export function metadata(page: Page): Metadata {
  // No prototype: a meta named "__proto__" must stay an ordinary key.
  const out = Object.create(null) as Metadata;
  const add = (key: string, value: string): void => {
    const current = out[key];
    if (current === undefined) out[key] = value;
    else if (Array.isArray(current)) {
      if (!current.includes(value)) current.push(value);
    } else if (current !== value) out[key] = [current, value];
  };
  const title = (page.head ?? page.root).querySelector('title');
  if (title) add('title', collapseWhitespace(title.text).trim());
  for (const meta of page.root.querySelectorAll('meta')) {
    const charset = meta.getAttribute('charset');
    if (charset) add('charset', charset.trim());
    const key = meta.getAttribute('name') ?? meta.getAttribute('property') ?? meta.getAttribute('http-equiv');
    const content = meta.getAttribute('content');
    if (key?.trim() && content !== undefined) add(key.trim().toLowerCase(), collapseWhitespace(content).trim());
  }
  return out;
}
