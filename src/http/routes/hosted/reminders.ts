import type Router from '@koa/router';
import { findCustomerForOps } from '../../../db/queries/customers.js';
import { hasOptedOut, recordOptOut } from '../../../db/queries/reminders.js';
import { customerIdOfOptOutToken } from '../../../domain/reminders/opt-out-token.js';
import type { AppContext, AppState } from '../../context.js';
import { messagePage, page, postForm } from './layout.js';
import { html } from './respond.js';
import type { HostedDeps } from './router.js';

const path = (token: string) => `/hosted/reminders/${encodeURIComponent(token)}`;

const done = () =>
  messagePage(
    'Lembretes por e-mail desativados',
    'Você não receberá mais lembretes de parcelas por e-mail. Os valores e vencimentos do seu empréstimo não mudam.',
  );

/**
 * The one-click opt-out of reminder e-mails (contract §17): the link in every reminder e-mail
 * (a signed token naming the customer) shows a page; its button (a form with the CSRF token of
 * every hosted page) records the opt-out. A GET changes nothing, so a mail scanner opening the
 * link opts nobody out. The partner's `installment.reminder` events go on.
 */
export function reminderOptOutRoutes(router: Router<AppState>, deps: HostedDeps): void {
  const customerOf = async (ctx: AppContext, token: string) => {
    const id = customerIdOfOptOutToken(deps.signing.signingLinkKeys, token);
    const customer = id ? await findCustomerForOps(deps.signing.db, id) : undefined;
    if (!customer) html(ctx, 404, messagePage('Link não encontrado', 'Este link não é válido.'));
    return customer;
  };

  router.get('/hosted/reminders/:token', async (ctx) => {
    const customer = await customerOf(ctx, ctx.params.token ?? '');
    if (!customer) return;
    if (await hasOptedOut(deps.signing.db, customer, customer.id)) return html(ctx, 200, done());
    html(
      ctx,
      200,
      page(
        'Lembretes por e-mail',
        `<h1>Parar os lembretes por e-mail?</h1>
<p>Você recebe lembretes das parcelas do seu empréstimo antes e depois do vencimento. Confirme abaixo para não receber mais esses e-mails.</p>
${postForm(path(ctx.params.token ?? ''), { token: ctx.params.token ?? '', csrf: ctx.state.csrf ?? '' }, '<button type="submit">Não quero mais receber lembretes por e-mail</button>')}`,
      ),
    );
  });

  router.post('/hosted/reminders/:token', async (ctx) => {
    const customer = await customerOf(ctx, ctx.params.token ?? '');
    if (!customer) return;
    await recordOptOut(deps.signing.db, customer, customer.id);
    ctx.state.log.info({ customerId: customer.id }, 'reminder e-mails opted out');
    html(ctx, 200, done());
  });
}
