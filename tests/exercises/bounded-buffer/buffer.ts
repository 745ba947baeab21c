// A correct bounded buffer in TypeScript, a ring of slots rather than a list.
export class BoundedBuffer<T = string> {
  private readonly slots: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(private readonly capacity: number) {
    if (typeof capacity !== "number" || !Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError("capacity must be an integer of at least 1");
    }
    this.slots = new Array(capacity);
  }

  put(item: T): boolean {
    if (this.count === this.capacity) return false;
    this.slots[(this.head + this.count) % this.capacity] = item;
    this.count += 1;
    return true;
  }

  take(): T | null {
    if (this.count === 0) return null;
    const item = this.slots[this.head] as T;
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
    return item;
  }

  state(): { items: T[]; capacity: number } {
    const items: T[] = [];
    for (let i = 0; i < this.count; i++) items.push(this.slots[(this.head + i) % this.capacity] as T);
    return { items, capacity: this.capacity };
  }
}
