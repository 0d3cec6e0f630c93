/**
 * Not a workflow: the workflow side of tracing (src/observability/tracing.ts), in every bundle.
 *
 * `@temporalio/interceptors-opentelemetry`'s workflow interceptors make a RunWorkflow span and a
 * StartActivity span per activity, children of the context the client sent in the start's
 * headers, and hand them out through the `exporter` sink. Here they run only for a workflow whose
 * start carried a trace context (a traced API or worker started it), and for a signal, Update or
 * query that carries one. So with tracing off nothing of it runs, and a workflow started before
 * tracing existed (no such header in its history) replays exactly as it ran, the extra yields of
 * the interceptors' older code paths included.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import type {
  ActivityInput,
  ContinueAsNewInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type { Headers } from '@temporalio/common';

type Inbound = WorkflowInboundCallsInterceptor;
type Outbound = WorkflowOutboundCallsInterceptor;

const carriesTrace = (headers: Headers) => headers[TRACE_HEADER] !== undefined;

export const interceptors = (): WorkflowInterceptors => {
  // One per workflow run: whether its start was traced, and its tracing interceptors once made.
  let traced = false;
  let inbound: OpenTelemetryInboundInterceptor | undefined;
  let outbound: OpenTelemetryOutboundInterceptor | undefined;
  const tracingIn = () => (inbound ??= new OpenTelemetryInboundInterceptor());
  const tracingOut = () => (outbound ??= new OpenTelemetryOutboundInterceptor());

  const onlyTraced: Inbound = {
    execute(input: WorkflowExecuteInput, next: Next<Inbound, 'execute'>) {
      traced = carriesTrace(input.headers);
      return traced ? tracingIn().execute(input, next) : next(input);
    },
    handleSignal(input: SignalInput, next: Next<Inbound, 'handleSignal'>) {
      return carriesTrace(input.headers) ? tracingIn().handleSignal(input, next) : next(input);
    },
    handleUpdate(input: UpdateInput, next: Next<Inbound, 'handleUpdate'>) {
      return carriesTrace(input.headers) ? tracingIn().handleUpdate(input, next) : next(input);
    },
    validateUpdate(input: UpdateInput, next: Next<Inbound, 'validateUpdate'>) {
      if (carriesTrace(input.headers)) tracingIn().validateUpdate(input, next);
      else next(input);
    },
    handleQuery(input: QueryInput, next: Next<Inbound, 'handleQuery'>) {
      return carriesTrace(input.headers) ? tracingIn().handleQuery(input, next) : next(input);
    },
  };

  const whenTraced: Outbound = {
    scheduleActivity(input: ActivityInput, next: Next<Outbound, 'scheduleActivity'>) {
      return traced ? tracingOut().scheduleActivity(input, next) : next(input);
    },
    scheduleLocalActivity(
      input: LocalActivityInput,
      next: Next<Outbound, 'scheduleLocalActivity'>,
    ) {
      return traced ? tracingOut().scheduleLocalActivity(input, next) : next(input);
    },
    startChildWorkflowExecution(
      input: StartChildWorkflowExecutionInput,
      next: Next<Outbound, 'startChildWorkflowExecution'>,
    ) {
      return traced ? tracingOut().startChildWorkflowExecution(input, next) : next(input);
    },
    continueAsNew(input: ContinueAsNewInput, next: Next<Outbound, 'continueAsNew'>) {
      return traced ? tracingOut().continueAsNew(input, next) : next(input);
    },
    signalWorkflow(input: SignalWorkflowInput, next: Next<Outbound, 'signalWorkflow'>) {
      return traced ? tracingOut().signalWorkflow(input, next) : next(input);
    },
    getLogAttributes(
      input: Record<string, unknown>,
      next: Next<Outbound, 'getLogAttributes'>,
    ): Record<string, unknown> {
      return traced ? tracingOut().getLogAttributes(input, next) : next(input);
    },
  };

  return {
    inbound: [onlyTraced],
    outbound: [whenTraced],
    // Releases the sandbox's context manager when a traced run leaves the cache; nothing otherwise.
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
