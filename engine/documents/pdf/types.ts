/** Shapes of the PDF layout analysis, in page space (points, origin bottom-left, y up). */

export interface Run {
  text: string;
  x0: number;
  x1: number;
  /** Baseline. */
  y: number;
  size: number;
  bold: boolean;
  italic: boolean;
  href?: string;
}

export interface Rule {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  horizontal: boolean;
}

export interface Box {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

export interface LinkArea extends Box {
  url: string;
}

export interface RawPage {
  number: number;
  /** The page's visible box (its view), in the same space as everything else. */
  left: number;
  bottom: number;
  right: number;
  top: number;
  runs: Run[];
  rules: Rule[];
  /** Small round or square shapes: list bullets drawn as paths. */
  marks: Box[];
  links: LinkArea[];
  hasImages: boolean;
}

/** Runs on one baseline that belong together: a line of a paragraph, a table cell's line, a heading. */
export interface Segment {
  runs: Run[];
  x0: number;
  x1: number;
  y: number;
  size: number;
  bold: boolean;
  text: string;
}

/** Segments that share a baseline, left to right. */
export interface Line {
  segments: Segment[];
  y: number;
  size: number;
}
