/** Something due to happen at simulated time `at` (epoch ms). */
export interface SimEvent {
  at: number;
  run(at: number): void;
}

interface Entry extends SimEvent {
  /** Insertion order: events due at the same time run in the order they were scheduled. */
  seq: number;
}

/** Binary min-heap on (at, seq): O(log n) push and pop, so 10,000 nodes' events stay cheap. */
export class EventQueue {
  private readonly heap: Entry[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(event: SimEvent): void {
    this.heap.push({ ...event, seq: this.nextSeq++ });
    this.siftUp(this.heap.length - 1);
  }

  /** Time of the earliest event, or undefined when empty. */
  peekTime(): number | undefined {
    return this.heap[0]?.at;
  }

  /** The earliest event, left in the queue. */
  peek(): SimEvent | undefined {
    return this.heap[0];
  }

  pop(): SimEvent | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private before(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i]!, heap[parent]!)) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && this.before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && this.before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}
