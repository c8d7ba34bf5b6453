// The suite runs against the real stack, started once by test/setup/global.ts on free ports.
module.exports = {
  'node-option': ['import=tsx'],
  require: ['test/setup/global.ts'],
  timeout: 120000,
  slow: 5000,
  reporter: 'spec',
  exit: true,
};
