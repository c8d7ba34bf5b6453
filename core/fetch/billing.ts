/**
 * The two ways a Fetch is paid. `holdCredits`: a Fetch call (HTTP, MCP) reserves the first
 * configuration's price before anything is fetched (AUTH004/AUTH014 at once), grows the reservation
 * for each dearer configuration, and settles what succeeded. `affordCredits`: a Batch task or crawl page
 * asks its run's own account of credits before each configuration, and is billed by its caller.
 */
import type { Principal } from '../accounts';
import { refusalError, type Charging, type Hold } from '../accounts/charging';
import type { Refusal } from '../accounts/ledger';
import type { ApiError } from '../../base/errors';
import type { FetchBilling } from './pipeline';

export interface HeldBilling extends FetchBilling {
  /** The refusal of the configuration the page needed, when credits ran out during the ladder. */
  refusal(): ApiError | undefined;
}

export function holdCredits(charging: Pick<Charging, 'reservePooled'>, principal: Principal): HeldBilling {
  let hold: Hold | undefined;
  let refused: Refusal | undefined;
  return {
    async open(credits) {
      hold = await charging.reservePooled(principal, credits, 'fetch');
      // The first configuration's price is charged now, its ledger write overlapping the fetch: the
      // answer then rarely waits for it (a failure refunds it before it is answered).
      hold.prepay();
    },
    async afford(credits) {
      if (!hold) return false;
      // Escalating to a dearer configuration first grows the reservation; no credits, no escalation.
      if (credits <= hold.credits) return true;
      const grown = await hold.tryGrow(credits);
      if (!grown.ok) refused = grown.refused;
      return grown.ok;
    },
    async settle(credits) {
      await hold?.settle(credits);
    },
    async close() {
      await hold?.release();
    },
    refusal: () => (refused ? refusalError(refused, 'fetch', principal) : undefined),
  };
}

/** Credits afforded per configuration by the caller (`afford` reserves up to `credits` in total); billed by the caller. */
export function affordCredits(afford: (credits: number) => Promise<boolean>): FetchBilling {
  return {
    open: async () => undefined,
    afford,
    settle: async () => undefined,
    close: async () => undefined,
  };
}
