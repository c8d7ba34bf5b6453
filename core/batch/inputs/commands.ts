/** CSV inputs as the API asks for them: a slot allocated under the plan's limits, and its upload stored through its link. */
import type { Principal } from '../../accounts';
import { planOfAccount } from '../../accounts/limits';
import { problem } from '../../../base/errors';
import type { CommandContext } from '../context';
import type { JobInputDoc } from '../store';
import { allocateInput, inputStates, newInputId, storeUpload, type CsvOptions } from './uploads';

export type CsvSettings = Omit<CsvOptions, 'delimiter' | 'quote' | 'header'> & { delimiter?: string; quote?: string; header?: boolean };

export function inputCommands(c: CommandContext) {
  const { deps, store } = c;
  return {
    // Each input holds one of the account's `stored_inputs` slots, a refusal remembered (limit-gate.ts).
    create: (principal: Principal, csv: CsvSettings): Promise<JobInputDoc> => {
      const id = newInputId();
      return deps.accounts.holdings.admit(principal, 'storedInputs', { id, states: (ids) => inputStates(store, ids) }, () =>
        allocateInput(store, principal, { delimiter: csv.delimiter ?? ',', quote: csv.quote ?? '"', header: csv.header ?? false, fields: csv.fields }, id),
      );
    },

    /** Stores the upload of slot `inputId` (reached through its link) as it arrives: false when the slot is unknown or expired. */
    async upload(inputId: string, body: AsyncIterable<Buffer>, declaredBytes: number): Promise<boolean> {
      const doc = await store.inputs.findOne({ _id: inputId });
      if (!doc || doc.expires_at.getTime() < Date.now()) return false;
      if (doc.uploaded) throw problem('conflict', 'This input was already uploaded.');
      const principal = await planOfAccount(deps.accounts, doc.account_id);
      const inputIds = await deps.accounts.holdings.holders({ accountId: doc.account_id, plan: principal.plan }, 'storedInputs');
      await storeUpload(store, doc, principal, inputIds, body, deps.config.csvInputMaxBytes, declaredBytes);
      return true;
    },
  };
}
