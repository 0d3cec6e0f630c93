import { inject } from 'vitest';

/** An e-mail as the run's Mailpit received it. */
export interface ReceivedMessage {
  subject: string;
  /** The plain-text part, with `\n` line ends (SMTP carried `\r\n`). */
  text: string;
  /** The HTML part; empty when there is none. */
  html: string;
  /** The To addresses. */
  to: string[];
  /** The From address (without its display name). */
  from: string;
  /** When Mailpit received it. */
  date: Date;
}

export interface WaitOptions {
  /** Only messages received at or after this time (e.g. the moment the test asked for a code). */
  after?: Date;
  subjectIncludes?: string;
  timeoutMs?: number;
}

interface Address {
  Name: string;
  Address: string;
}

interface SearchResult {
  messages: { ID: string; To: Address[] | null; Subject: string; Created: string }[];
}

interface MessageDetail {
  From: Address | null;
  To: Address[] | null;
  Subject: string;
  Text: string;
  HTML: string;
}

/**
 * Waits until the run's Mailpit holds a message to `to` (matching the options) and returns the
 * newest such message. Addresses are unique per test, so nothing is ever deleted.
 */
export async function waitForMessage(
  to: string,
  options: WaitOptions = {},
): Promise<ReceivedMessage> {
  // Vitest hands the run's Mailpit to a test; a script outside Vitest (a bench) names it.
  const api = process.env.MAILPIT_API_URL ?? inject('mailpitApiUrl');
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  const wanted = to.toLowerCase();
  for (;;) {
    // Mailpit's `to:` matches a part of the address; the exact address is checked below.
    const query = new URLSearchParams({ query: `to:"${to}"`, limit: '50' });
    const found = await getJson<SearchResult>(`${api}/search?${query.toString()}`);
    // Newest first.
    const match = found.messages.find(
      (message) =>
        (message.To ?? []).some((address) => address.Address.toLowerCase() === wanted) &&
        (!options.after || new Date(message.Created) >= options.after) &&
        (!options.subjectIncludes || message.Subject.includes(options.subjectIncludes)),
    );
    if (match) {
      const detail = await getJson<MessageDetail>(`${api}/message/${match.ID}`);
      return {
        subject: detail.Subject,
        text: detail.Text.replace(/\r\n/g, '\n'),
        html: detail.HTML,
        to: (detail.To ?? []).map((address) => address.Address),
        from: detail.From?.Address ?? '',
        date: new Date(match.Created),
      };
    }
    if (Date.now() > deadline) {
      const filters = [
        options.after && `after ${options.after.toISOString()}`,
        options.subjectIncludes && `subject including "${options.subjectIncludes}"`,
      ].filter(Boolean);
      throw new Error(
        `no e-mail to ${to}${filters.length ? ` (${filters.join(', ')})` : ''} reached Mailpit`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The code in a message's text (`… é 123456.`, as the service writes it; the loan id before it
 * is hex and can hold six digits in a row); throws when there is none.
 */
export function codeIn(message: Pick<ReceivedMessage, 'text' | 'subject'>): string {
  const code = / é (\d{6})\./.exec(message.text)?.[1];
  if (!code) throw new Error(`no 6-digit code in the e-mail "${message.subject}"`);
  return code;
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`Mailpit answered ${response.status} to ${url}`);
  return (await response.json()) as T;
}
