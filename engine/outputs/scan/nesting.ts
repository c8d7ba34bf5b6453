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

interface Open {
  name: string | null;
  children: number;
}

export class CapReached {
  constructor(
    readonly cap: ParseCap,
    readonly limit: number,
  ) {}
}

export class Nesting {
  private readonly stack: Open[] = [{ name: null, children: 0 }];
  nodes = 0;
  depth = 0;

  constructor(private readonly caps: ParseCaps) {}

  private get top(): Open {
    return this.stack[this.stack.length - 1] as Open;
  }

  /** A start tag: what it closes first (unless self-closing), then the element, one level deeper. */
  open(name: string, selfClosing: boolean): void {
    if (!selfClosing) {
      for (let top = this.top; top.name !== null && CLOSED_BY_OPENING.get(top.name)?.has(name); top = this.top) this.stack.pop();
    }
    this.top.children++;
    this.count(1);
    this.stack.push({ name, children: 0 });
    const depth = this.stack.length - 1;
    if (depth > this.depth) {
      this.depth = depth;
      if (depth > this.caps.maxDepth) throw new CapReached('depth', this.caps.maxDepth);
    }
  }

  close(name: string): void {
    const { stack } = this;
    for (;;) {
      const top = this.top;
      if (top.name === name) {
        stack.pop();
        return;
      }
      if (top.name !== null && CLOSED_BY_CLOSING.get(top.name)?.has(name)) {
        stack.pop();
        continue;
      }
      if (top.name === 'p' && stack.length > 2 && stack[stack.length - 2]?.name === name && !P_CLOSED_BY_PARENT_EXCEPT.has(name)) {
        stack.pop();
        continue;
      }
      return;
    }
  }

  /** A text node of the open element. */
  addText(): void {
    this.top.children++;
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
    const { stack } = this;
    while (stack.length > 1) {
      const last = stack.pop() as Open;
      const parent = this.top;
      if (stack.length === 1) continue; // a child of the root stays where it is
      if (last.name === parent.name) {
        stack.pop();
        this.count(parent.children + last.children);
        parent.children -= 1;
        this.top.children += last.children;
      } else {
        this.count(parent.children + last.children);
        parent.children += last.children - 1;
      }
    }
  }
}
