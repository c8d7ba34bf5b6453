/**
 * Resumability of Streamable HTTP sessions: the messages sent on each stream, kept so a client that
 * reconnects with `Last-Event-ID` gets what it missed. In memory and bounded: the oldest go first.
 * Streams belong to the process that opened them, so an event id this process does not know (one
 * from another API process, or one already dropped) is refused rather than answered by a stream
 * that would never carry anything.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private next = 0;

  constructor(private readonly capacity = 1_000) {}

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${String(++this.next).padStart(12, '0')}`;
    this.events.set(eventId, { streamId, message });
    if (this.events.size > this.capacity) {
      const oldest = this.events.keys().next().value;
      if (oldest !== undefined) this.events.delete(oldest);
    }
    return Promise.resolve(eventId);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.events.get(eventId)?.streamId);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    for (const [eventId, event] of this.events) {
      if (eventId === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.streamId === last.streamId) await send(eventId, event.message);
    }
    return last.streamId;
  }
}
