/**
 * The parser's stack as the pre-scan keeps it (the rules of ./rules.ts): elements opened and closed,
 * nodes and depth counted, the first cap past thrown as CapReached. The whole-page scan (./index.ts)
 * and the scan of a page as it arrives (./stream.ts) share it, so both nest a page alike.
 */
import * as rules from './rules';

// Read once: run through tsx, every use of an imported binding is a getter call, which the hot paths of a scan felt.
const CLOSED_BY_CLOSING = rules.CLOSED_BY_CLOSING;
const CLOSED_BY_OPENING = rules.CLOSED_BY_OPENING;
const P_CLOSED_BY_PARENT_EXCEPT = rules.P_CLOSED_BY_PARENT_EXCEPT;

/** What one page may make the parser do. */
export interface ParseCaps {
  /** Characters of HTML. */
  maxChars: number;
  /** Nodes (elements and text), each move of a node when an element left open is closed counted as one more. */
  maxNodes: number;
  /** Elements open at once. */
  maxDepth: number;
}

export type ParseCap = 'size' | 'nodes' | 'depth';

export class CapReached {
  constructor(
    readonly cap: ParseCap,
    readonly limit: number,
  ) {}
}

/**
 * The open elements as two parallel stacks, their names (as numbers) and their children. Typed arrays,
 * not one object nor one array slot per element: a deep page opens 50,000 elements, and arrays that
 * big live in the JavaScript heap's large-object space, where every hostile page refused would
 * otherwise add a megabyte or two for the old-generation collector (pauses felt by every request).
 */
export class Nesting {
  /** Each name's number (1, 2, …; 0 is the root), for this page only: as many as the page has names. */
  private readonly ids = new Map<string, number>();
  private readonly namesById: string[] = [''];
  private names = new Uint32Array(64);
  private children = new Uint32Array(64);
  /** Open elements, the root included. */
  private length = 1;
  nodes = 0;
  depth = 0;

  constructor(private readonly caps: ParseCaps) {}

  /** The name of the element `below` levels under the top (null: the root or past it). */
  private nameAt(below = 0): string | null {
    const index = this.length - 1 - below;
    return index > 0 ? (this.namesById[this.names[index] as number] as string) : null;
  }

  private pop(): void {
    this.length--;
  }

  private push(name: string): void {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.namesById.length;
      this.ids.set(name, id);
      this.namesById.push(name);
    }
    if (this.length === this.names.length) {
      const names = new Uint32Array(this.length * 2);
      names.set(this.names);
      this.names = names;
      const children = new Uint32Array(this.length * 2);
      children.set(this.children);
      this.children = children;
    }
    this.names[this.length] = id;
    this.children[this.length] = 0;
    this.length++;
  }

  /** A start tag: what it closes first (unless self-closing), then the element, one level deeper. */
  open(name: string, selfClosing: boolean): void {
    if (!selfClosing) {
      for (let top = this.nameAt(); top !== null && CLOSED_BY_OPENING.get(top)?.has(name); top = this.nameAt()) this.pop();
    }
    this.children[this.length - 1]!++;
    this.count(1);
    this.push(name);
    const depth = this.length - 1;
    if (depth > this.depth) {
      this.depth = depth;
      if (depth > this.caps.maxDepth) throw new CapReached('depth', this.caps.maxDepth);
    }
  }

  close(name: string): void {
    for (;;) {
      const top = this.nameAt();
      if (top === name) {
        this.pop();
        return;
      }
      if (top !== null && CLOSED_BY_CLOSING.get(top)?.has(name)) {
        this.pop();
        continue;
      }
      if (top === 'p' && this.length > 2 && this.nameAt(1) === name && !P_CLOSED_BY_PARENT_EXCEPT.has(name)) {
        this.pop();
        continue;
      }
      return;
    }
  }

  /** A text node of the open element. */
  addText(): void {
    this.children[this.length - 1]!++;
    this.count(1);
  }

  private count(nodes: number): void {
    this.nodes += nodes;
    if (this.nodes > this.caps.maxNodes) throw new CapReached('nodes', this.caps.maxNodes);
  }

  /**
   * What the parser does with the elements still open at the end, counted: from the innermost out,
   * each is removed from its parent (a pass over the parent's children) and its children appended to
   * the parent, or, when the parent has the same name, to the grandparent (the parent then counts as closed).
   */
  closeWhatIsLeftOpen(): void {
    const { children } = this;
    while (this.length > 1) {
      const lastName = this.nameAt();
      const lastChildren = children[this.length - 1] as number;
      this.pop();
      if (this.length === 1) continue; // a child of the root stays where it is
      const parent = this.length - 1;
      const parentChildren = children[parent] as number;
      if (lastName === this.nameAt()) {
        this.pop();
        this.count(parentChildren + lastChildren);
        children[this.length - 1]! += lastChildren;
      } else {
        this.count(parentChildren + lastChildren);
        children[parent] = parentChildren + lastChildren - 1;
      }
    }
  }
}
