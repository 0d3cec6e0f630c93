/** Every record belongs to one partner in one of these. */
export const environments = ['sandbox', 'production'] as const;
export type Environment = (typeof environments)[number];
