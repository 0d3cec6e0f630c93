/**
 * From nothing to a loan paid by Pix in the sandbox. Run it against `npm run dev` with the demo
 * partner's sandbox credentials (.data/demo-partner.json):
 *
 *   EMBEDDED_CREDIT_CLIENT_ID=cli_… EMBEDDED_CREDIT_CLIENT_SECRET=… \
 *     npx tsx sdk/typescript/examples/quick-start.ts 52998224725
 */
import { readFile } from 'node:fs/promises';
// In your project: import { createClient } from '@embedded-credit/sdk';
import { createClient } from '../src/index.js';

const cpf = process.argv[2] ?? '52998224725';
const client = createClient(); // EMBEDDED_CREDIT_CLIENT_ID, _SECRET and _API_URL
const pause = () => new Promise((resolve) => setTimeout(resolve, 500));

// 1. The customer, their documents and biometrics; the sandbox review approves them.
const customer = await client.customers.create({
  cpf,
  name: 'Maria Silva',
  email: `maria.${Date.now()}@example.com`,
  phone: '+5511987654321',
});
const pdf = await readFile(new URL('./document.pdf', import.meta.url));
for (const type of ['identity_card_front', 'identity_card_back', 'selfie'] as const)
  await client.customers.documents.upload(customer.id, {
    type,
    file: { data: pdf, filename: `${type}.pdf`, contentType: 'application/pdf' },
  });
await client.sandbox.captureBiometrics(customer.id);
await client.sandbox.approveCustomer(customer.id);

// 2. The offer (issued by a workflow a moment after the customer is active), a simulation, a loan.
let offer;
while (!offer) {
  for await (const available of client.customers.creditOffers(customer.id, {
    status: 'available',
  }))
    offer = available;
  if (!offer) await pause();
}
const simulation = await client.creditOffers.simulate(offer.id, {
  amount: offer.min_amount, // centavos
  installments: 3,
});
let loan = await client.loans.create({
  credit_offer_id: offer.id,
  simulation_id: simulation.id,
  disbursement_account: { type: 'pix', pix_key: customer.email },
});

// 3. Signed, disbursed, and paid off by a Pix charge.
await client.sandbox.signLoan(loan.id, { cpf: loan.signers[0]!.cpf });
while (loan.status !== 'processing')
  loan = await pause().then(() => client.loans.retrieve(loan.id));
await client.sandbox.reportDisbursement(loan.id, { outcome: 'confirmed' });
const charge = await client.loans.charges.create(loan.id, { scope: 'payoff' });
await client.sandbox.payCharge(charge.id);
while (loan.status !== 'finished') loan = await pause().then(() => client.loans.retrieve(loan.id));

process.stdout.write(`${loan.id} ${loan.status}: paid ${charge.amount} centavos by Pix\n`);
