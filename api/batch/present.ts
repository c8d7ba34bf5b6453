/** Presenting what the Batch commands return, where it is more than a JSON body: a stored task body, an export file. */
import type { TaskBody } from '../../core/batch/commands/queries';
import type { AppContext } from '../http/context';
import { SANDBOX } from './schemas';

/** A stored body, sandboxed (it is the target's content, served from our origin). */
export function sendBody(ctx: AppContext, found: TaskBody): void {
  ctx.set(SANDBOX);
  ctx.set('Content-Type', found.contentType);
  ctx.body = found.body;
}
