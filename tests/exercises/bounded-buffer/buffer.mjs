// A correct bounded buffer in JavaScript (ESM), written from the exercise's rules alone.
export class BoundedBuffer {
  #capacity;
  #items = [];

  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be an integer of at least 1, not ${capacity}`);
    }
    this.#capacity = capacity;
  }

  put(item) {
    if (this.#items.length === this.#capacity) return false;
    this.#items.push(item);
    return true;
  }

  take() {
    return this.#items.length === 0 ? null : this.#items.shift();
  }

  state() {
    return { items: [...this.#items], capacity: this.#capacity };
  }
}
