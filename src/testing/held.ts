/** Requests the fake holds (hung or slowed by a fault): all let go at once on reset or close. */
export class HeldRequests {
  #releases = new Set<() => void>();

  /** Resolves only when {@link releaseAll} is called. */
  hang(): Promise<void> {
    return new Promise((resolve) => this.#releases.add(resolve));
  }

  /** Resolves after `ms`, or earlier when {@link releaseAll} is called. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.#releases.delete(release);
        resolve();
      };
      const timer = setTimeout(release, ms);
      this.#releases.add(release);
    });
  }

  /** Lets every held request go. */
  releaseAll(): void {
    const waiting = [...this.#releases];
    this.#releases.clear();
    for (const release of waiting) release();
  }
}
