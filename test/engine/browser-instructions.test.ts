import { expect } from 'chai';
import { parseInstructions, type Instruction, type InstructionsReport } from '../../engine/browser';
import { success, useHarness } from '../fixtures/browser/harness';

const instructions = (raw: unknown[]): Instruction[] => {
  const parsed = parseInstructions(JSON.stringify(raw));
  if (!parsed.ok) throw new Error(parsed.error.detail);
  return parsed.instructions;
};

const outcomes = (report: InstructionsReport | undefined): Array<[string, boolean]> =>
  (report?.instructions ?? []).map((outcome) => [outcome.instruction, outcome.success]);

describe('js_instructions parsing', () => {
  it('accepts every kind with its argument shape', () => {
    const parsed = parseInstructions(
      JSON.stringify([
        { click: '#a' },
        { wait: 100 },
        { wait_for: '.b' },
        { wait_event: 'networkidle' },
        { fill: ['#name', 'Ada'] },
        { check: '#agree' },
        { uncheck: '#news' },
        { select_option: ['#color', 'blue'] },
        { scroll_y: 1000 },
        { scroll_x: -20 },
        { evaluate: 'document.title' },
        { frame_click: ['#child', '#go'] },
        { frame_wait_for: ['#child', '#answer'] },
        { frame_fill: ['#child', '#q', 42] },
        { frame_evaluate: ['#child', 'document.title'] },
      ]),
    );
    expect(parsed.ok).to.equal(true);
    if (parsed.ok) {
      expect(parsed.instructions).to.have.length(15);
      expect(parsed.instructions[13]).to.deep.equal({ kind: 'frame_fill', arg: ['#child', '#q', '42'] });
    }
  });

  it('refuses bad input before any browser is touched, naming the parameter', () => {
    const cases: Array<[string, RegExp]> = [
      ['[{"click": "#a"', /not valid JSON/],
      ['{"click": "#a"}', /JSON array/],
      ['[{"hover": "#a"}]', /unknown instruction "hover"/],
      ['[{"click": "#a", "wait": 1}]', /exactly one key/],
      ['["click"]', /object with one key/],
      ['[{"click": 5}]', /click expects a CSS selector/],
      ['[{"wait": "1000"}]', /wait expects milliseconds/],
      ['[{"wait": 30001}]', /wait expects milliseconds/],
      ['[{"wait_event": "idle"}]', /expects one of networkidle, load, domcontentloaded/],
      ['[{"fill": "#a"}]', /expects an array \[selector, value\]/],
      ['[{"frame_fill": ["#f", "#a"]}]', /expects an array \[iframe selector, selector, value\]/],
      ['[{"scroll_y": 1.5}]', /scroll_y expects pixels/],
      [JSON.stringify(Array.from({ length: 101 }, () => ({ wait: 1 }))), /at most 100/],
    ];
    for (const [raw, detail] of cases) {
      const parsed = parseInstructions(raw);
      expect(parsed.ok, raw).to.equal(false);
      if (!parsed.ok) {
        expect(parsed.error.parameter).to.equal('js_instructions');
        expect(parsed.error.kind).to.equal('invalid_parameter');
        expect(parsed.error.detail, raw).to.match(detail);
      }
    }
  });
});

describe('js_instructions in the browser', function () {
  const h = useHarness();

  it('clicks to reveal data and waits for it', async () => {
    const result = success(await h.render({ url: h.site.at('/click'), instructions: instructions([{ click: '#reveal' }, { wait_for: '#secret:not(:empty)' }]) }));
    expect(result.html).to.contain('the secret is 7');
    expect(outcomes(result.instructionsReport)).to.deep.equal([
      ['click', true],
      ['wait_for', true],
    ]);
  });

  it('fills, checks, unchecks and selects in a form', async () => {
    const result = success(
      await h.render({
        url: h.site.at('/form'),
        instructions: instructions([{ fill: ['#name', 'Ada'] }, { check: '#agree' }, { uncheck: '#news' }, { select_option: ['#color', 'blue'] }, { click: '#submit' }]),
      }),
    );
    expect(result.html).to.contain('name=Ada;agree=true;news=false;color=blue');
    expect(result.instructionsReport?.instructions_succeeded).to.equal(5);
  });

  it('scrolls an infinite list until more items load, and scrolls sideways', async () => {
    const result = success(
      await h.render({
        url: h.site.at('/scroll'),
        instructions: instructions([
          { wait_for: '.item' },
          { scroll_y: 100_000 },
          { wait_for: 'li.item:nth-child(20)' },
          { scroll_y: 100_000 },
          { wait_for: 'li.item:nth-child(30)' },
          { scroll_x: 10 },
          { evaluate: 'window.scrollY > 0' },
        ]),
      }),
    );
    expect(result.html).to.contain('item 30');
    const last = result.instructionsReport?.instructions.at(-1);
    expect(last).to.include({ instruction: 'evaluate', success: true, result: true });
  });

  it('works inside an iframe: frame_wait_for, frame_fill, frame_click, frame_evaluate', async () => {
    const result = success(
      await h.render({
        url: h.site.at('/frames'),
        instructions: instructions([
          { frame_wait_for: ['#child', '#inner-late'] },
          { frame_fill: ['#child', '#q', 'hello'] },
          { frame_click: ['#child', '#go'] },
          { frame_evaluate: ['#child', 'document.getElementById("answer").textContent'] },
        ]),
      }),
    );
    expect(outcomes(result.instructionsReport).every(([, ok]) => ok)).to.equal(true);
    expect(result.instructionsReport?.instructions[3]?.result).to.equal('asked hello');
  });

  it('waits for load events and time, and evaluates scripts', async () => {
    const result = success(
      await h.render({
        url: h.site.at('/dynamic'),
        instructions: instructions([{ wait_event: 'networkidle' }, { wait_event: 'load' }, { wait: 50 }, { evaluate: 'document.getElementById("out").textContent = "changed"' }]),
      }),
    );
    expect(result.html).to.contain('<div id="out">changed</div>');
    expect(result.instructionsReport).to.include({ instructions_count: 4, instructions_succeeded: 4, instructions_failed: 0 });
  });

  it('reports a failing instruction with its reason and goes on; skips what the budget cannot cover', async () => {
    const failing = success(
      await h.render(
        { url: h.site.at('/click'), instructions: instructions([{ click: '#missing' }, { click: '#reveal' }, { wait_for: '#secret:not(:empty)' }]) },
        { actionTimeoutMs: 1_000 },
      ),
    );
    const [missing, reveal] = failing.instructionsReport?.instructions ?? [];
    expect(missing).to.include({ instruction: 'click', success: false });
    expect(missing?.error).to.match(/Timeout|exceeded/i);
    expect(reveal).to.include({ instruction: 'click', success: true });
    expect(failing.html).to.contain('the secret is 7');

    const budget = await h.render({ url: h.site.at('/dynamic'), instructions: instructions([{ wait: 400 }, { wait: 30_000 }, { click: '#out' }]) }, { instructionsBudgetMs: 1_500 });
    const report = success(budget).instructionsReport;
    // The long wait is cut at the budget, and the click after it is skipped.
    expect(report?.instructions[1]).to.include({ instruction: 'wait', success: false });
    expect(report?.instructions[2]).to.include({ instruction: 'click', skipped: true });
    expect(report?.instructions_skipped).to.equal(1);
  });
});
