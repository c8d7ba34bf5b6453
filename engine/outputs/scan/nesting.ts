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

/** The open elements as two parallel stacks, their names and their children (no object per element: a deep page opens 50,000). */
export class Nesting {
  /** `null`: the root. */
  private readonly names: Array<string | null> = [null];
  private readonly children: number[] = [0];
  nodes = 0;
  depth = 0;

  constructor(private readonly caps: ParseCaps) {}

  private pop(): void {
    this.names.pop();
    this.children.pop();
  }

  /** A start tag: what it closes first (unless self-closing), then the element, one level deeper. */
  open(name: string, selfClosing: boolean): void {
    const { names, children } = this;
    if (!selfClosing) {
      for (let top = names[names.length - 1]; top !== null && top !== undefined && CLOSED_BY_OPENING.get(top)?.has(name); top = names[names.length - 1]) this.pop();
    }
    children[children.length - 1]!++;
    this.count(1);
    names.push(name);
    children.push(0);
    const depth = names.length - 1;
    if (depth > this.depth) {
      this.depth = depth;
      if (depth > this.caps.maxDepth) throw new CapReached('depth', this.caps.maxDepth);
    }
  }

  close(name: string): void {
    const { names } = this;
    for (;;) {
      const top = names[names.length - 1];
      if (top === name) {
        this.pop();
        return;
      }
      if (top !== null && top !== undefined && CLOSED_BY_CLOSING.get(top)?.has(name)) {
        this.pop();
        continue;
      }
      if (top === 'p' && names.length > 2 && names[names.length - 2] === name && !P_CLOSED_BY_PARENT_EXCEPT.has(name)) {
        this.pop();
        continue;
      }
      return;
    }
  }

  /** A text node of the open element. */
  addText(): void {
    this.children[this.children.length - 1]!++;
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
    const { names, children } = this;
    while (names.length > 1) {
      const lastName = names.pop();
      const lastChildren = children.pop() as number;
      if (names.length === 1) continue; // a child of the root stays where it is
      const parent = names.length - 1;
      const parentChildren = children[parent] as number;
      if (lastName === names[parent]) {
        this.pop();
        this.count(parentChildren + lastChildren);
        children[names.length - 1]! += lastChildren;
      } else {
        this.count(parentChildren + lastChildren);
        children[parent] = parentChildren + lastChildren - 1;
      }
    }
  }
}
