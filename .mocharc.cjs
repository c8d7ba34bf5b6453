// Shared by both runs of `npm test` (scripts/bootstrap.js): the unit suites (test/unit, no stack) and
// the suites against the real stack, which add `--require test/setup/global.ts` to start it once on free ports.
module.exports = {
  'node-option': ['import=tsx'],
  timeout: 120000,
  slow: 5000,
  reporter: 'spec',
  exit: true,
};
