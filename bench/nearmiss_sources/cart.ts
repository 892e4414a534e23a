import { EventEmitter } from "node:events";

export interface Product {
  id: string;
  title: string;
  priceCents: number;
  tags?: readonly string[];
}

export interface Line {
  product: Product;
  quantity: number;
}

export type Discount =
  | { kind: "percent"; value: number }
  | { kind: "fixed"; cents: number }
  | { kind: "bundle"; productId: string; every: number };

export class Cart extends EventEmitter {
  private readonly lines = new Map<string, Line>();

  constructor(private readonly currency: string = "EUR") {
    super();
  }

  add(product: Product, quantity = 1): void {
    if (!Number.isInteger(quantity) || quantity <= 0) {
      throw new RangeError(`quantity must be a positive integer, got ${quantity}`);
    }
    const line = this.lines.get(product.id);
    if (line) {
      line.quantity += quantity;
    } else {
      this.lines.set(product.id, { product, quantity });
    }
    this.emit("change", this.snapshot());
  }

  remove(productId: string): boolean {
    const removed = this.lines.delete(productId);
    if (removed) {
      this.emit("change", this.snapshot());
    }
    return removed;
  }

  subtotal(): number {
    let cents = 0;
    for (const { product, quantity } of this.lines.values()) {
      cents += product.priceCents * quantity;
    }
    return cents;
  }

  total(discounts: Discount[] = []): number {
    let cents = this.subtotal();
    for (const discount of discounts) {
      switch (discount.kind) {
        case "percent":
          cents -= Math.round((cents * discount.value) / 100);
          break;
        case "fixed":
          cents -= Math.min(cents, discount.cents);
          break;
        case "bundle": {
          const line = this.lines.get(discount.productId);
          if (line) {
            const free = Math.floor(line.quantity / discount.every);
            cents -= free * line.product.priceCents;
          }
          break;
        }
      }
    }
    return Math.max(0, cents);
  }

  format(cents: number): string {
    return new Intl.NumberFormat("de-DE", { style: "currency", currency: this.currency }).format(cents / 100);
  }

  private snapshot(): Line[] {
    return [...this.lines.values()].map((line) => ({ ...line }));
  }
}
