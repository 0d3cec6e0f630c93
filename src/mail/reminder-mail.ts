/**
 * The borrower's reminder e-mail (contract §17), in Portuguese: the installment, what it asks for
 * on the reminder's day, the Pix "copia e cola" of a charge for it, and the one-click opt-out.
 */
import { brDate } from '../domain/business-date.js';
import { daysBetween } from '../domain/business-date.js';
import { formatBrl } from '../domain/money.js';
import type { MailMessage } from './mailer.js';

export interface ReminderMail {
  to: string;
  customerName: string;
  installmentNumber: number;
  dueDate: string;
  /** The business date of the reminder (the amount is the one due that day). */
  date: string;
  amountDue: number;
  brCode: string | null;
  optOutUrl: string;
  /** Stable per (loan, row, step): a retried send carries the same Message-ID. */
  messageId: string;
}

function when(dueDate: string, date: string): string {
  const days = daysBetween(date, dueDate);
  if (days > 1) return `vence em ${days} dias, em ${brDate(dueDate)}`;
  if (days === 1) return `vence amanhã, ${brDate(dueDate)}`;
  if (days === 0) return `vence hoje, ${brDate(dueDate)}`;
  return `venceu em ${brDate(dueDate)} e está em atraso há ${-days} ${days === -1 ? 'dia' : 'dias'}`;
}

export function reminderMessage(mail: ReminderMail): MailMessage {
  const firstName = mail.customerName.trim().split(/\s+/)[0] ?? '';
  const text = [
    `Olá${firstName ? `, ${firstName}` : ''}.`,
    '',
    `A parcela ${mail.installmentNumber} do seu empréstimo ${when(mail.dueDate, mail.date)}.`,
    `Valor para pagamento em ${brDate(mail.date)}: ${formatBrl(mail.amountDue)}${
      daysBetween(mail.dueDate, mail.date) > 0 ? ' (com multa e juros de atraso)' : ''
    }.`,
    '',
    ...(mail.brCode
      ? ['Pague com Pix copia e cola (válido até o fim do dia):', '', mail.brCode, '']
      : []),
    'Se você já pagou, desconsidere esta mensagem.',
    '',
    `Para não receber mais lembretes por e-mail: ${mail.optOutUrl}`,
  ].join('\n');
  return {
    to: mail.to,
    subject: `Lembrete: parcela ${mail.installmentNumber} de ${formatBrl(mail.amountDue)} (vencimento ${brDate(mail.dueDate)})`,
    text,
    // The page, not RFC 8058's one-click POST: that POST could not carry the page's CSRF token.
    headers: { 'List-Unsubscribe': `<${mail.optOutUrl}>` },
    messageId: mail.messageId,
  };
}
