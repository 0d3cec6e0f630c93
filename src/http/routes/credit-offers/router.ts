import {
  creditOfferNotFound,
  simulateOffer,
  type SimulationDeps,
} from '../../../commands/simulate-offer.js';
import {
  findCreditOffer,
  findSimulation,
  listCreditOffers,
} from '../../../db/queries/credit-offers.js';
import { findCustomer } from '../../../db/queries/customers.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf } from '../../context.js';
import { presentPage } from '../../list.js';
import { customerParams } from '../customers/schema.js';
import { presentCreditOffer, presentSimulation } from '../../../presenters/credit-offers.js';
import {
  creditOfferList,
  creditOfferListQuery,
  creditOfferParams,
  creditOfferSchema,
  customerCreditOfferListQuery,
  simulateBody,
  simulationParams,
  simulationSchema,
} from './schema.js';

const tag = 'Credit offers';

export function creditOfferRoutes(api: ApiRouter, deps: SimulationDeps): void {
  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}/credit-offers',
      operationId: 'listCustomerCreditOffers',
      summary: "List a customer's credit offers",
      description:
        'Offers appear when the customer is `active` and its credit analysis approved (watch `credit_offer.available`). At most one is `available` or `accepted` at a time.',
      tag,
      security: 'partner',
      params: customerParams,
      query: customerCreditOfferListQuery,
      responses: { 200: { description: 'A page of offers.', schema: creditOfferList } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const tenant = tenantOf(ctx);
      if (!(await findCustomer(deps.db, tenant, params.customer_id)))
        throw problems.notFound('customer_not_found', `No customer ${params.customer_id}.`);
      ctx.body = presentPage(
        await listCreditOffers(deps.db, tenant, { ...query, customer_id: params.customer_id }),
        presentCreditOffer,
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/credit-offers',
      operationId: 'listCreditOffers',
      summary: 'List credit offers across customers',
      tag,
      security: 'partner',
      query: creditOfferListQuery,
      responses: { 200: { description: 'A page of offers.', schema: creditOfferList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(
        await listCreditOffers(deps.db, tenantOf(ctx), query),
        presentCreditOffer,
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/credit-offers/{credit_offer_id}',
      operationId: 'getCreditOffer',
      summary: 'Retrieve a credit offer',
      tag,
      security: 'partner',
      params: creditOfferParams,
      responses: { 200: { description: 'The offer.', schema: creditOfferSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const offer = await findCreditOffer(deps.db, tenantOf(ctx), params.credit_offer_id);
      if (!offer) throw creditOfferNotFound(params.credit_offer_id);
      ctx.body = presentCreditOffer(offer);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/credit-offers/{credit_offer_id}/simulations',
      operationId: 'simulateCreditOffer',
      summary: 'Simulate loan terms for an offer',
      description:
        'Prices `amount` (what the customer receives) over `installments` monthly payments: Price on calendar days, IOF financed, CET on the real dates. Only an `available` offer can be simulated (409 `credit_offer_unavailable`) — or, contract §17, an offer `accepted` by an `active` loan: the simulation then prices that loan’s refinancing (its payoff on the release date, which `amount` must cover — 422 `refinancing_not_covered` —, and the IOF of a refinanced balance; 409 `loan_already_being_refinanced`, `refinanced_loan_written_off`, `refinanced_loan_in_agreement`; see docs/refinancing.md). Amounts, installments and `first_due_date` outside the offer’s bounds are 422, one entry per field.',
      tag,
      security: 'partner',
      idempotent: true,
      params: creditOfferParams,
      body: simulateBody,
      responses: {
        201: {
          description: 'The simulation.',
          schema: simulationSchema,
          headers: { Location: 'Path of the simulation.' },
        },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const simulation = await simulateOffer(deps, tenantOf(ctx), params.credit_offer_id, body);
      ctx.status = 201;
      ctx.set(
        'Location',
        `/v3/credit-offers/${simulation.creditOfferId}/simulations/${simulation.id}`,
      );
      ctx.body = presentSimulation(simulation);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/credit-offers/{credit_offer_id}/simulations/{simulation_id}',
      operationId: 'getSimulation',
      summary: 'Retrieve a simulation',
      tag,
      security: 'partner',
      params: simulationParams,
      responses: { 200: { description: 'The simulation.', schema: simulationSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const tenant = tenantOf(ctx);
      if (!(await findCreditOffer(deps.db, tenant, params.credit_offer_id)))
        throw creditOfferNotFound(params.credit_offer_id);
      const simulation = await findSimulation(deps.db, tenant, {
        creditOfferId: params.credit_offer_id,
        simulationId: params.simulation_id,
      });
      if (!simulation)
        throw problems.notFound(
          'simulation_not_found',
          `No simulation ${params.simulation_id} of this credit offer.`,
        );
      ctx.body = presentSimulation(simulation);
    },
  );
}
