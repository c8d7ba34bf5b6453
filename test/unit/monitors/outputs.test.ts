import { expect } from 'chai';
import { isApiError } from '../../../base/errors';
import { checkOutputs, type MonitorBody } from '../../../core/monitors/inputs';

const refusal = (body: MonitorBody): Record<string, unknown> => {
  try {
    checkOutputs(body);
  } catch (error) {
    if (isApiError(error)) return { code: error.code, ...error.members };
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
};

describe('a monitor’s compared outputs', () => {
  it('takes extract as a mode or {mode, fields}, auto by default, fields deduplicated in order', () => {
    expect(checkOutputs({ extract: 'standard' })).to.deep.equal({ extract: { mode: 'standard' } });
    expect(checkOutputs({ extract: {} })).to.deep.equal({ extract: { mode: 'auto' } });
    expect(checkOutputs({ extract: { mode: 'native', fields: ['price', 'agent.name', 'price', 'items.price'] }, main_content: true })).to.deep.equal({
      extract: { mode: 'native', fields: ['price', 'agent.name', 'items.price'] },
      main_content: true,
    });
    expect(checkOutputs({ css_extractor: { price: '.price' }, main_content: false })).to.deep.equal({ css_extractor: { price: '.price' } });
  });

  it('refuses a bad extract naming the part at fault', () => {
    const cases: Array<[unknown, string]> = [
      ['everything', 'extract.mode'],
      [{ mode: 3 }, 'extract.mode'],
      [{ price: '.price' }, 'extract.price'],
      [{ fields: [] }, 'extract.fields'],
      [{ fields: Array.from({ length: 51 }, (_, k) => `f${k}`) }, 'extract.fields'],
      [{ fields: ['price', ''] }, 'extract.fields[1]'],
      [{ fields: ['price', 'a..b'] }, 'extract.fields[1]'],
      [{ fields: ['x'.repeat(201)] }, 'extract.fields[0]'],
      [['auto'], 'extract'],
      [null, 'extract'],
    ];
    for (const [extract, parameter] of cases) expect(refusal({ extract } as MonitorBody), JSON.stringify(extract)).to.deep.equal({ code: 'invalid_argument', parameter });
    expect(refusal({ extract: 'auto', css_extractor: { price: '.price' } })).to.deep.equal({ code: 'invalid_argument', parameter: 'extract' });
    expect(refusal({ css_extractor: {} })).to.deep.equal({ code: 'invalid_argument', parameter: 'css_extractor' });
  });
});
