/** One page of a list, as every list operation answers it. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/**
 * Every item of a list, page after page: `for await (const loan of client.loans.list())`. Pages
 * are fetched as the loop reaches them, each after the last item of the previous one
 * (`starting_after`), until a page says `has_more: false`.
 */
export class PageIterator<T extends { id: string }> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (startingAfter: string | undefined) => Promise<Page<T>>,
  ) {}

  /** The pages themselves, for callers that work a page at a time. */
  async *pages(): AsyncGenerator<Page<T>> {
    let startingAfter: string | undefined;
    for (;;) {
      const page = await this.fetchPage(startingAfter);
      yield page;
      const last = page.data.at(-1);
      if (!page.has_more || !last) return;
      startingAfter = last.id;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item in one array (mind the size of what you list). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
