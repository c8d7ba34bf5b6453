/**
 * Runs to lines: runs on one baseline form a line; within a line, a gap wider than most word spaces
 * or a vertical ruling line starts a new segment (a table cell, the other column). Link areas are laid
 * over the runs, splitting a run by words where a link covers only part of it.
 */
import type { LinkArea, Line, Rule, Run, Segment } from './types';

/** A gap wider than this many font sizes separates segments (word spaces are about a quarter). */
const SEGMENT_GAP = 0.75;

export function buildLines(runs: Run[], rules: Rule[], links: LinkArea[], body: number): Line[] {
  const linked = links.length > 0 ? runs.flatMap((run) => applyLinks(run, links)) : runs;
  const sorted = [...linked].sort((a, b) => b.y - a.y || a.x0 - b.x0);
  const groups: Run[][] = [];
  let current: Run[] = [];
  let baseline = Infinity;
  for (const run of sorted) {
    if (current.length > 0 && Math.abs(run.y - baseline) <= 0.3 * Math.max(run.size, current[0]!.size)) {
      current.push(run);
      continue;
    }
    if (current.length > 0) groups.push(current);
    current = [run];
    baseline = run.y;
  }
  if (current.length > 0) groups.push(current);
  const verticals = rules.filter((rule) => !rule.horizontal);
  return groups.map((group) => toLine(group, verticals, body));
}

function toLine(runs: Run[], verticals: Rule[], body: number): Line {
  runs.sort((a, b) => a.x0 - b.x0);
  const segments: Segment[] = [];
  let open: Run[] = [];
  const close = () => {
    if (open.length > 0) segments.push(segment(open));
    open = [];
  };
  const wordGap = justifiedGap(runs, body);
  for (const run of runs) {
    const last = open[open.length - 1];
    if (last) {
      const gap = run.x0 - last.x1;
      const size = Math.max(run.size, last.size);
      const ruled = verticals.some((rule) => rule.x0 >= last.x1 - 1 && rule.x1 <= run.x0 + 1 && rule.y0 <= run.y + 0.5 * size && rule.y1 >= run.y);
      if (gap > Math.max(SEGMENT_GAP * size, wordGap * 1.5) || ruled) close();
    }
    open.push(run);
  }
  close();
  mergeMarkers(segments);
  const size = Math.max(...segments.map((s) => s.size));
  const y = segments.reduce((sum, s) => sum + s.y, 0) / segments.length;
  return { segments, y, size };
}

/**
 * Justified text stretches its word spaces past the segment gap, all by the same amount: when at least
 * two wide gaps of a line agree within 30 % and the runs between them are plain words (not figures, nor
 * bold text at body size: both make table rows), that width is a word space here. Zero when the line is
 * not justified that way.
 */
function justifiedGap(runs: Run[], body: number): number {
  const wide: number[] = [];
  for (let i = 1; i < runs.length; i++) {
    const gap = runs[i]!.x0 - runs[i - 1]!.x1;
    if (gap > SEGMENT_GAP * runs[i]!.size && gap < 2 * runs[i]!.size) wide.push(gap);
  }
  if (wide.length < 2) return 0;
  wide.sort((a, b) => a - b);
  const agreeing = wide.filter((gap) => gap <= wide[0]! * 1.3);
  if (agreeing.length < 2 || runs.some((run) => (run.bold && run.size < body * 1.12) || !/\p{L}/u.test(run.text))) return 0;
  return agreeing[agreeing.length - 1]!;
}

/** A bullet or number standing apart from its text (a tab after it) belongs to the text's segment. */
export const MARKER = /^(?:[•◦▪▫‣⁃∙·●○■□◆◇►▸▹➢➤✓✔–—*-]|\(?(?:\d{1,3}|[a-z]|[ivx]{1,5})[.)])$/i;

function mergeMarkers(segments: Segment[]): void {
  for (let i = 0; i + 1 < segments.length; i++) {
    const marker = segments[i]!;
    const next = segments[i + 1]!;
    if (!MARKER.test(marker.text) || next.x0 - marker.x1 > 5 * marker.size) continue;
    segments.splice(i, 2, segment([...marker.runs, { ...next.runs[0]!, text: ' ' + next.runs[0]!.text.trimStart() }, ...next.runs.slice(1)]));
  }
}

function segment(runs: Run[]): Segment {
  const parts: Run[] = [];
  let text = '';
  for (const run of runs) {
    const last = parts[parts.length - 1];
    let piece = run.text;
    if (last) {
      const gap = run.x0 - last.x1;
      const size = Math.max(run.size, last.size);
      const spaced = /\s$/.test(text) || /^\s/.test(piece);
      if (!spaced && gap > 0.12 * size) piece = ' ' + piece;
      // pdf.js sometimes starts a run with a space its own position denies (after a soft hyphen): the geometry wins.
      else if (/^ \p{Ll}/u.test(piece) && /\p{L}$/u.test(text) && Math.abs(gap) < 0.08 * size) piece = piece.slice(1);
    }
    text += piece;
    parts.push({ ...run, text: piece });
  }
  // The segment's size and weight are its majority's, by characters.
  let chars = 0;
  let boldChars = 0;
  let sizeSum = 0;
  for (const run of runs) {
    const n = run.text.trim().length;
    chars += n;
    if (run.bold) boldChars += n;
    sizeSum += run.size * n;
  }
  return {
    runs: parts,
    x0: runs[0]!.x0,
    x1: Math.max(...runs.map((run) => run.x1)),
    y: runs[0]!.y,
    size: chars > 0 ? sizeSum / chars : runs[0]!.size,
    bold: chars > 0 && boldChars / chars > 0.6,
    text: text.replace(/\s+/g, ' ').trim(),
  };
}

/**
 * A run under link areas: whole when one area covers its middle, else split into words whose
 * estimated positions (widths in proportion to characters) fall inside an area.
 */
function applyLinks(run: Run, links: LinkArea[]): Run[] {
  const middle = run.y + run.size * 0.3;
  const touching = links.filter((link) => link.y0 - 1 <= middle && link.y1 + 1 >= middle && link.x1 > run.x0 && link.x0 < run.x1);
  if (touching.length === 0) return [run];
  const inside = (x: number) => touching.find((link) => x >= link.x0 - 0.5 && x <= link.x1 + 0.5);
  const whole = touching.find((link) => link.x0 <= run.x0 + 1 && link.x1 >= run.x1 - 1);
  if (whole) return [{ ...run, href: whole.url }];
  const perChar = (run.x1 - run.x0) / Math.max(1, run.text.length);
  const out: Run[] = [];
  const pieces = run.text.split(/(\s+)/);
  let at = 0;
  for (const piece of pieces) {
    if (!piece) continue;
    const x0 = run.x0 + at * perChar;
    const x1 = x0 + piece.length * perChar;
    at += piece.length;
    const last = out[out.length - 1];
    if (!piece.trim()) {
      out.push({ ...run, text: piece, x0, x1, href: undefined });
      continue;
    }
    const url = inside((x0 + x1) / 2)?.url;
    const beforeSpace = out[out.length - 2];
    // "link text": the space between two words of one link belongs to the link.
    if (last && !last.text.trim() && beforeSpace && url && beforeSpace.href === url) {
      out.pop();
      beforeSpace.text += last.text + piece;
      beforeSpace.x1 = x1;
    } else if (last && last.href === url && last.text.trim()) {
      last.text += piece;
      last.x1 = x1;
    } else out.push({ ...run, text: piece, x0, x1, href: url });
  }
  return out;
}

/** The body text size: the size most characters have (to half a point). */
export function bodySize(runs: Run[]): number {
  const counts = new Map<number, number>();
  for (const run of runs) {
    const key = Math.round(run.size * 2) / 2;
    counts.set(key, (counts.get(key) ?? 0) + run.text.length);
  }
  let best = 10;
  let most = -1;
  for (const [size, count] of counts) {
    if (count > most) {
      best = size;
      most = count;
    }
  }
  return best;
}
