/** Monitors as MCP tools: create, list and delete them, and read a monitor's changes (the `/v1/monitors` commands). */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/accounts';
import type { MonitorBody } from '../../core/monitors/inputs';
import type { ApiDeps } from '../deps';
import { checkBody, type ObjectSchema } from '../http/routes';
import { presentChange, presentCheck, presentMonitor } from '../monitors/present';
import { monitorIssues } from '../monitors/issues';
import { CREATE_BODY } from '../monitors/schemas';

/** A tool as tools.ts runs it (declared here too: tools.ts imports this list). */
interface ToolDefinition extends Tool {
  run(principal: Principal, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

type ToolSchema = ObjectSchema & { type: 'object' };

const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] });

const LIST_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'The previous answer’s next_cursor.' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
};
const ONE_INPUT: ToolSchema = { type: 'object', additionalProperties: false, required: ['monitor_id'], properties: { monitor_id: { type: 'string', minLength: 1, maxLength: 64 } } };
const CHANGES_INPUT: ToolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['monitor_id'],
  properties: {
    monitor_id: { type: 'string', minLength: 1, maxLength: 64 },
    check_id: { type: 'string', minLength: 1, maxLength: 64, description: 'One check; omit for the newest checks.' },
    limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Newest checks read when check_id is omitted (default 5).' },
  },
};

export function monitorTools(deps: ApiDeps): ToolDefinition[] {
  const commands = deps.services.monitors;
  const withChanges = async (principal: Principal, monitorId: string, checkId: string) => {
    const found = await commands.check(principal, monitorId, checkId);
    return { ...presentCheck(found.check), changes: found.changes.map(presentChange) };
  };
  return [
    {
      name: 'monitor_create',
      description:
        'Watch pages for changes: `urls` (or `crawl`: the pages found from a start URL) checked on `schedule` ({every, unit} or {cron, timezone}); optional css_extractor or extract (a prepared domain’s fields) compared one by one, main_content to compare the article only, and a signed `webhook` per change. ' +
        'The first check records the baseline; later checks report pages changed, new and removed (noise such as times and tokens does not count). Billed like the fetches each check makes.',
      inputSchema: CREATE_BODY as ToolSchema,
      async run(principal, args) {
        await deps.readiness.requireWorker();
        const created = await commands.create(principal, checkBody(CREATE_BODY, args, monitorIssues) as MonitorBody);
        return json(presentMonitor(created.monitor, created.nextCheckAt));
      },
    },
    {
      name: 'monitor_list',
      description: 'The account’s monitors, newest first; pass next_cursor back as cursor for more.',
      inputSchema: LIST_INPUT,
      async run(principal, args) {
        const input = checkBody(LIST_INPUT, args) as { cursor?: string; limit?: number };
        const listed = await commands.list(principal, { limit: input.limit ?? 20, ...(input.cursor ? { cursor: input.cursor } : {}) });
        return json({ monitors: listed.items.map((monitor) => presentMonitor(monitor, null)), next_cursor: listed.nextCursor });
      },
    },
    {
      name: 'monitor_delete',
      description: 'Delete a monitor: no check starts and no event is sent from then on.',
      inputSchema: ONE_INPUT,
      async run(principal, args) {
        const { monitor_id: monitorId } = checkBody(ONE_INPUT, args) as { monitor_id: string };
        await commands.remove(principal, monitorId);
        return json({ monitor_id: monitorId, deleted: true });
      },
    },
    {
      name: 'monitor_changes',
      description: 'A monitor’s changes: its newest checks (or one check) with the pages changed, new, removed or failed, each with its diff (text, and fields when compared).',
      inputSchema: CHANGES_INPUT,
      async run(principal, args) {
        const input = checkBody(CHANGES_INPUT, args) as { monitor_id: string; check_id?: string; limit?: number };
        if (input.check_id) return json(await withChanges(principal, input.monitor_id, input.check_id));
        const listed = await commands.checks(principal, input.monitor_id, { limit: input.limit ?? 5 });
        return json({ monitor_id: input.monitor_id, checks: await Promise.all(listed.items.map((check) => withChanges(principal, input.monitor_id, check._id))) });
      },
    },
  ];
}
