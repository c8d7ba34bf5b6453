/**
 * V8 flags of the API and the worker, given by the launcher (stack.ts); docker-compose.yml and the
 * Dockerfile start them with the same (a unit test holds them to it). None at present:
 * `--max-semi-space-size=1` saved 0–25 MB of a Node process while rendering (bench/peer-crawl4ai.ts
 * `--node-options`), but it made Fetch cost 612 µs of API CPU per request against 297 without it
 * (bench/fetch-throughput.ts, 1758 against 3186 requests/s in the same session): young-generation
 * collections that often cost more than the memory they save.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [];
