/**
 * `npx tsx bench/robots-match.ts`: the cost of one robots.txt check (`RobotsRules.allows`) against a
 * hostile rule (`Disallow: /*a*a*a*a*a*a*a*a*Z$`, which a backtracking regular expression takes
 * minutes over on 60 characters), as a ratio to an ordinary prefix rule checked in the same run, on
 * paths of 64, 2,048 and 100,000 characters; then whole files of hostile rules within the caps
 * (ROBOTS_MAX_RULES rules, ROBOTS_MAX_BYTES), each rule matched against a 2,048-character path (the
 * longest URL a Fetch takes). Matching is linear in the path for each rule, so the first ratio stays
 * near 1; a whole file costs about rules × path until ROBOTS_MAX_MATCH_WORK stops it (`too_costly`).
 * Options: --ms N per measurement (default 300).
 */
import { parseArgs } from 'node:util';
import { parseRobots, ROBOTS_MAX_BYTES, ROBOTS_MAX_RULES } from '../engine/robots/parse';

const { values } = parseArgs({ options: { ms: { type: 'string' } } });
const budgetMs = Math.min(10_000, Math.max(50, Number(values.ms ?? 300) || 300));

/** Microseconds per call of `work`, over about `budgetMs`. */
function perCall(work: () => unknown): number {
  let calls = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(budgetMs) * 1_000_000n;
  let now = started;
  while (now < deadline) {
    for (let n = 0; n < 16; n++) work();
    calls += 16;
    now = process.hrtime.bigint();
  }
  return Number(now - started) / 1_000 / calls;
}

const plain = parseRobots('User-agent: *\nDisallow: /private\n', 'fetchplane');
const hostile = parseRobots('User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*Z$\n', 'fetchplane');

process.stdout.write(`one robots.txt check, ${budgetMs} ms per figure\n`);
for (const length of [64, 2_048, 100_000]) {
  const path = `/${'a'.repeat(length - 1)}`;
  const base = perCall(() => plain.allows(path));
  const worst = perCall(() => hostile.allows(path));
  process.stdout.write(`path ${String(length).padStart(6)}: prefix rule ${base.toFixed(2)} µs, hostile rule ${worst.toFixed(2)} µs, ratio ${(worst / base).toFixed(2)}\n`);
}
// Whole files of hostile rules, within the caps: every rule is matched against every path checked.
const path = `/${'a'.repeat(2_047)}`;
const long = 'a'.repeat(500) + 'b' + 'a'.repeat(499);
const files: Record<string, string> = {
  [`${ROBOTS_MAX_RULES} rules /*a*<n>*a*Z$ (short pieces absent from the path)`]: Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /*a*${n}*a*Z$`).join('\n'),
  [`${ROBOTS_MAX_RULES} rules /*a{7}b{n}a*Z$ (short pieces that almost match)`]: Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /*aaaaaaab${n}*Z$`).join('\n'),
  [`${Math.floor(ROBOTS_MAX_BYTES / 1_020)} rules of 1,000-character pieces a{500+}ba{499} (a 500 KiB file)`]: Array.from({ length: Math.floor(ROBOTS_MAX_BYTES / 1_020) }, (_, n) => `Disallow: /*${'a'.repeat(n % 7)}${long}*$`).join('\n'),
  [`${ROBOTS_MAX_RULES} rules of 129-character pieces a{64+}ba{64}`]: Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /*${'a'.repeat(64 + (n % 7))}b${'a'.repeat(64)}*$`).join('\n'),
  [`${ROBOTS_MAX_RULES} rules of 128-character pieces a{63+}ba{64}`]: Array.from({ length: ROBOTS_MAX_RULES }, (_, n) => `Disallow: /*${'a'.repeat(63 + (n % 7))}b${'a'.repeat(64)}*$`).join('\n'),
};
for (const [name, rules] of Object.entries(files)) {
  const robots = parseRobots(`User-agent: *\n${rules}\n`, 'fetchplane');
  process.stdout.write(`path   2048: ${name}: ${(perCall(() => robots.allows(path)) / 1_000).toFixed(2)} ms per check (${robots.decide(path)})\n`);
}
