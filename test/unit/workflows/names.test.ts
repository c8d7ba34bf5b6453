import { expect } from 'chai';
import * as names from '../../../core/jobs/workflow-names';
import * as workflows from '../../../workflows';

describe('workflow names', () => {
  it('names every workflow the worker registers by its function, and nothing else', () => {
    const types = Object.entries(names)
      .filter(([name]) => name.endsWith('_WORKFLOW_TYPE'))
      .map(([, value]) => value as string)
      .sort();
    const registered = Object.entries(workflows)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name)
      .sort();
    expect(types).to.deep.equal(registered);
  });

  it('keeps the ids that existing runs and deliveries were started under', () => {
    expect(names.batchRunWorkflowId('r1')).to.equal('run-r1');
    expect(names.crawlWorkflowId('c1')).to.equal('crawl-c1');
    expect(names.webhookWorkflowId('e1')).to.equal('webhook-e1');
    expect(names.prepareWorkflowId('shop.test')).to.equal('prepare-shop.test');
    expect(names.batchExportWorkflowId('x1')).to.equal('export-x1');
    expect(names.lightTaskQueue('fetchplane')).to.equal('fetchplane-light');
  });
});
