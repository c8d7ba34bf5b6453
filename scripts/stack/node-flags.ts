/**
 * V8 flags of the API and the worker: a young generation of 1 MB semi-spaces instead of up to 16 MB.
 * Measured against Crawl4AI (bench/peer-crawl4ai.ts `--node-options`), the browser host's Node peaked
 * at 146–160 MB with it against 169–185 MB without (0–25 MB less across runs, engine/browser/README.md),
 * its CPU per page within the runs' spread. The launcher (stack.ts), docker-compose.yml and the
 * Dockerfile start them with these.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];
