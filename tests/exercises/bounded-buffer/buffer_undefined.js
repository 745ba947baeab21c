// breaks take-empty-none: take() on an empty buffer returns undefined (a bare return), not null
class BoundedBuffer {
  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('bad capacity');
    this.capacity = capacity;
    this.items = [];
  }
  put(item) {
    if (this.items.length >= this.capacity) return false;
    this.items.push(item);
    return true;
  }
  take() {
    if (this.items.length === 0) return;
    return this.items.shift();
  }
  state() {
    return { items: [...this.items], capacity: this.capacity };
  }
}
module.exports = { BoundedBuffer };
