/**
 * The page side of the settle rule (quiet.ts), put into every document before its scripts (an init
 * script of the top frame). It counts the page's own work that can still add content:
 * - timers: a `setTimeout` due within the horizon (the settle cap), set outside any timer or from a
 *   timer that is itself counted when due within NESTED_HORIZON_MS, at most NEST_LIMIT deep, and never
 *   by the callback that is running (a callback rescheduling itself is a loop: a clock, a poller); a `setInterval`'s first run when
 *   its period is at most INTERVAL_HORIZON_MS (a short "is it ready yet" poll), never its later runs;
 * - animation frames: a `requestAnimationFrame` asked for outside a frame, and each next frame of a
 *   chain while the previous one changed the DOM, RAF_CHAIN_LIMIT frames at most;
 * - DOM changes of the main frame after DOMContentLoaded (nodes added or removed, text changed):
 *   the time of the last one starts the still window. Changes made inside a callback that is not
 *   counted (an interval's later runs, a loop's timer, a long rAF chain) are dropped: a ticking clock,
 *   a carousel or an animation never holds the page. Attribute and style changes are not content;
 * - a `<meta http-equiv="refresh">` due within the horizon: the page is about to move (and where it
 *   moves may be refused, which must be seen before the page is taken).
 * `wait(stillMs, maxMs)` answers once nothing counted is pending and the DOM has been still for
 * `stillMs`, or after `maxMs`: `{ idle, pending, since }`.
 */

const NEST_LIMIT = 3;
const INTERVAL_HORIZON_MS = 250;
const RAF_CHAIN_LIMIT = 4;
/** A timer set from a counted timer counts only when due this soon: a slower one is a loop's next step. */
const NESTED_HORIZON_MS = 500;

/** The global the probe keeps its state in (not enumerable, not writable by the page). */
export const PROBE_GLOBAL = '__fetchplaneSettle';

export function pendingProbe(horizonMs: number): string {
  return `(() => {
  if (window !== window.top || Object.prototype.hasOwnProperty.call(window, '${PROBE_GLOBAL}')) return;
  const nativeSet = window.setTimeout, nativeClear = window.clearTimeout, nativeInterval = window.setInterval,
    nativeClearInterval = window.clearInterval, nativeRaf = window.requestAnimationFrame, nativeCancelRaf = window.cancelAnimationFrame,
    now = () => performance.now();
  const timers = new Set(), frames = new Set(), waiters = [];
  let last = -Infinity, contentLoaded = document.readyState !== 'loading';
  /** The counted callback running now: its depth and handler (undefined outside callbacks). */
  let running;
  const observer = new MutationObserver((records) => { if (contentLoaded && records.length > 0) touch(); });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
  document.addEventListener('DOMContentLoaded', () => { observer.takeRecords(); contentLoaded = true; holdForRefresh(); }, { once: true });
  if (contentLoaded) holdForRefresh();
  /** A meta refresh due within the horizon moves the page: pending until it does (bounded: a second past its time). */
  function holdForRefresh() {
    const meta = document.querySelector('meta[http-equiv="refresh" i]');
    const delay = meta ? parseFloat(meta.getAttribute('content') || '') * 1000 : NaN;
    if (!(delay >= 0) || delay > ${horizonMs}) return;
    const hold = {};
    timers.add(hold);
    nativeSet.call(window, () => { timers.delete(hold); kick(); }, delay + 1000);
  }
  const pending = () => timers.size + frames.size;
  function touch() { last = now(); kick(); }
  function kick() {
    if (waiters.length === 0) return;
    const since = now() - last;
    for (const waiter of waiters.slice()) {
      if (pending() > 0) continue;
      if (since >= waiter.still) waiter.done(true);
      else if (!waiter.recheck) waiter.recheck = nativeSet.call(window, () => { waiter.recheck = undefined; kick(); }, waiter.still - since);
    }
  }
  /**
   * Runs a callback as counted (its DOM changes start the still window) or not (they are dropped);
   * after() learns whether it changed the DOM.
   */
  function call(counted, context, run, after) {
    const outer = running;
    running = counted ? context : { ...context, depth: Infinity };
    let failed = false, error;
    try { run(); } catch (thrown) { failed = true; error = thrown; }
    const changed = contentLoaded && observer.takeRecords().length > 0;
    running = outer;
    if (after) after(changed);
    if (counted) touch();
    else if (running === undefined) kick();
    // The page's own error reaches its handlers as it would have.
    if (failed) throw error;
  }
  /** Whether a timer or frame asked for now, with this handler and delay, is counted, and at which depth. */
  function admit(handler, delay) {
    if (running === undefined) return delay <= ${horizonMs} ? 0 : -1;
    if (running.depth >= ${NEST_LIMIT} || running.handler === handler || delay > ${NESTED_HORIZON_MS}) return -1;
    return running.depth + 1;
  }
  window.setTimeout = function setTimeout(handler, delay, ...args) {
    if (typeof handler !== 'function') return nativeSet.call(window, handler, delay, ...args);
    const depth = admit(handler, Number(delay) || 0);
    const id = nativeSet.call(window, function () {
      call(timers.delete(id), { depth, handler }, () => handler.apply(this, args));
    }, delay);
    if (depth >= 0) timers.add(id);
    return id;
  };
  window.clearTimeout = function clearTimeout(id) { const had = timers.delete(id); nativeClear.call(window, id); if (had) kick(); };
  window.setInterval = function setInterval(handler, delay, ...args) {
    if (typeof handler !== 'function') return nativeInterval.call(window, handler, delay, ...args);
    const depth = (Number(delay) || 0) <= ${INTERVAL_HORIZON_MS} ? admit(handler, Number(delay) || 0) : -1;
    let first = depth >= 0;
    const id = nativeInterval.call(window, function () {
      const counted = first && timers.delete(id);
      first = false;
      call(counted, { depth, handler }, () => handler.apply(this, args));
    }, delay);
    if (first) timers.add(id);
    return id;
  };
  window.clearInterval = function clearInterval(id) { const had = timers.delete(id); nativeClearInterval.call(window, id); if (had) kick(); };
  /**
   * Frames: the next frame a counted frame asks for stays counted only if that frame changed the DOM
   * (known when it ends) and the chain is shorter than the limit.
   */
  window.requestAnimationFrame = function requestAnimationFrame(handler) {
    if (typeof handler !== 'function') return nativeRaf.call(window, handler);
    const parent = running !== undefined && running.children !== undefined ? running : undefined;
    const chain = parent ? parent.chain + 1 : 0;
    const depth = parent ? (parent.depth === Infinity || chain >= ${RAF_CHAIN_LIMIT} ? -1 : parent.depth) : admit(handler, 0);
    const id = nativeRaf.call(window, function (time) {
      const context = { depth, handler, chain, children: [] };
      call(frames.delete(id), context, () => handler.call(this, time), (changed) => {
        if (!changed) for (const child of context.children) frames.delete(child);
      });
    });
    if (depth >= 0) {
      frames.add(id);
      if (parent) parent.children.push(id);
    }
    return id;
  };
  window.cancelAnimationFrame = function cancelAnimationFrame(id) { const had = frames.delete(id); nativeCancelRaf.call(window, id); if (had) kick(); };
  const state = {
    wait(still, max) {
      return new Promise((resolve) => {
        const waiter = { still, recheck: undefined, done: undefined };
        const timer = nativeSet.call(window, () => waiter.done(false), max);
        waiter.done = (idle) => {
          nativeClear.call(window, timer);
          if (waiter.recheck) nativeClear.call(window, waiter.recheck);
          const at = waiters.indexOf(waiter);
          if (at >= 0) waiters.splice(at, 1);
          resolve({ idle, pending: pending(), since: Math.min(1e9, now() - last) });
        };
        waiters.push(waiter);
        kick();
      });
    },
  };
  Object.defineProperty(window, '${PROBE_GLOBAL}', { value: Object.freeze(state) });
})();`;
}
