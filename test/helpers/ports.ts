import { pickPort } from '../../scripts/stack/ports';

/**
 * A port nothing listened on a moment ago, outside the kernel's ephemeral range: no outgoing
 * connection can take it meanwhile (scripts/stack/ports.ts). For servers a test starts itself, bind
 * port 0 and read the port instead; this is for servers that cannot report their port, and for ports
 * that must stay closed.
 */
export async function freePort(): Promise<number> {
  return pickPort();
}
