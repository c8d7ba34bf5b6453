import { expect } from 'chai';
import { recordedHistories, replayFailures } from '../../helpers/replay';

describe('workflow determinism: recorded histories', function () {
  // Bundling the workflow code once (cached afterwards under STACK_DIR) takes a few seconds.
  this.timeout(180_000);

  it('replays every recorded crawl and Batch run history with the workflow code of this tree', async () => {
    const histories = recordedHistories();
    const kinds = histories.map((entry) => entry.workflowId.split('-')[0]);
    expect(kinds, 'a crawl and a Batch run at least').to.include.members(['crawl', 'run']);
    expect(await replayFailures(histories)).to.deep.equal([]);
  });
});
