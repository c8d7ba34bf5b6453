/**
 * V8 flags of the API and the worker: a young generation of 1 MB semi-spaces instead of up to 16 MB
 * keeps 15–30 MB less of the browser host's heap resident while it renders; its CPU per page stayed within
 * the runs' spread (0.116 and 0.122 CPU-s against 0.107 and 0.118 at concurrency 2)
 * (bench/peer-crawl4ai.ts `--node-options`; the README's rendering figures). The launcher
 * (stack.ts), docker-compose.yml and the Dockerfile start them with these.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];
