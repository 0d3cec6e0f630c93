import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/devstack/free-port.js';
import { createLogger } from '../../src/logger.js';
import { createMailer, MailUnavailableError } from '../../src/mail/mailer.js';
import { codeIn, waitForMessage } from '../helpers/mailbox.js';

const logger = createLogger('silent', 'test');
const address = () => `signer-${randomUUID()}@example.test`;

/** A send's wall time, and how it ended. */
async function timed(send: Promise<void>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await send.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, ms: Date.now() - started };
}

describe('the SMTP mailer, against the run’s Mailpit', () => {
  const mailer = createMailer({
    smtpUrl: inject('smtpUrl'),
    from: 'Crédito Embutido <nao-responda@credito.test>',
    logger,
  });
  afterAll(() => mailer.close());

  it('delivers a Portuguese message intact: subject, text, HTML, recipient and sender', async () => {
    const to = address();
    const sentAt = new Date();
    const subject = 'Código de verificação — assinatura do contrato nº 42 (ação até amanhã)';
    const text = 'Olá, João!\nSeu código é 482913.\nEle vale por 10 minutos; não o compartilhe.';
    await mailer.send({ to, subject, text, html: '<p>Seu código é <b>482913</b>.</p>' });

    const message = await waitForMessage(to, { after: sentAt, subjectIncludes: 'verificação' });
    expect(message.subject).toBe(subject);
    expect(message.text).toBe(text);
    expect(message.html).toContain('Seu código é <b>482913</b>');
    expect(message.to).toEqual([to]);
    expect(message.from).toBe('nao-responda@credito.test');
    expect(message.date.getTime()).toBeGreaterThanOrEqual(sentAt.getTime());
    expect(codeIn(message)).toBe('482913');
  });

  it('waits for a later message to the same address when asked for one after a time', async () => {
    const to = address();
    await mailer.send({ to, subject: 'Primeiro código', text: 'Seu código é 111111.' });
    await waitForMessage(to);
    const resentAt = new Date();
    await mailer.send({ to, subject: 'Novo código', text: 'Seu código é 222222.' });

    expect(codeIn(await waitForMessage(to, { after: resentAt }))).toBe('222222');
  });
});

describe('the SMTP mailer when no server takes the mail', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('rejects with MailUnavailableError when SMTP_URL is not set', async () => {
    const mailer = createMailer({ smtpUrl: undefined, from: 'x <x@credito.test>', logger });
    await expect(mailer.send({ to: address(), subject: 'a', text: 'b' })).rejects.toThrow(
      MailUnavailableError,
    );
  });

  it('rejects with MailUnavailableError, at once, when the port is closed', async () => {
    const port = await freePort(); // free now: nothing listens there
    const mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      from: 'x <x@t.test>',
      logger,
    });
    try {
      const { error, ms } = await timed(mailer.send({ to: address(), subject: 'a', text: 'b' }));
      expect(error).toBeInstanceOf(MailUnavailableError);
      expect((error as MailUnavailableError).cause).toBeDefined();
      expect(ms).toBeLessThan(10_000);
    } finally {
      mailer.close();
    }
  });

  it('rejects with MailUnavailableError within its timeout when the server never greets', async () => {
    // Accepts the connection and says nothing: a hung relay.
    const silent = createServer((socket) => sockets.push(socket));
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      from: 'x <x@t.test>',
      logger,
    });
    try {
      const { error, ms } = await timed(mailer.send({ to: address(), subject: 'a', text: 'b' }));
      expect(error).toBeInstanceOf(MailUnavailableError);
      expect(ms).toBeLessThan(20_000);
    } finally {
      mailer.close();
    }
  }, 30_000);
});
