/**
 * Abort signals for the tasks of one activity, tied to its cancellation through a single listener.
 * A slice runs dozens of fetches at once and each listens to the signal it is given: handed the
 * activity's own signal, they would stack dozens of listeners on one target (Node warns past ten,
 * MaxListenersExceededWarning). Here each task listens only to its own signal, forgotten when it ends.
 */
export class TaskSignals {
  private readonly live = new Set<AbortController>();
  private readonly onAbort = (): void => {
    for (const controller of this.live) controller.abort(this.parent.reason);
    this.live.clear();
  };

  constructor(private readonly parent: AbortSignal) {
    parent.addEventListener('abort', this.onAbort, { once: true });
  }

  /** A signal for one task, aborted with the activity; call `done` when the task ends. */
  open(): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    if (this.parent.aborted) controller.abort(this.parent.reason);
    else this.live.add(controller);
    return { signal: controller.signal, done: () => this.live.delete(controller) };
  }

  /** Removes the one listener (the activity is over). */
  close(): void {
    this.parent.removeEventListener('abort', this.onAbort);
    this.live.clear();
  }
}
