/** The contract of a smoke-check workflow (`smoke-check/{smk_id}`): its input. */
export interface SmokeCheckInput {
  smokeCheckId: string;
  /** A durable timer to wait on first; proves timers fire on this deployment. */
  delayMs: number;
}
