import { TestWorkflowEnvironment } from '@temporalio/testing';
import { allSearchAttributeKeys } from '../temporal/search-attributes.js';
import { explainStartFailure, type Resolved } from './temporal-binaries.js';

export interface DevServerOptions {
  cli: Resolved;
  port: number;
  /** Omit for a headless server (tests). */
  uiPort?: number;
  /** Keeps workflow state across restarts; omit for an in-memory server. */
  dbFilename?: string;
  /**
   * The UI's Remote Codec endpoint (the API's `/ops/v1/temporal-codec`). The CLI sets no "include
   * credentials" for it: each browser ticks that once in the UI's Codec Server settings.
   */
  uiCodecEndpoint?: string;
}

/**
 * The Temporal CLI dev server (a real Temporal server with SQLite and the Web UI), with the
 * project's search attributes registered. Started through the SDK's ephemeral-server launcher,
 * which stops the process when the environment is torn down.
 */
export async function startTemporalDevServer(
  options: DevServerOptions,
): Promise<TestWorkflowEnvironment> {
  try {
    return await TestWorkflowEnvironment.createLocal({
      server: {
        executable: options.cli.executable,
        ip: '127.0.0.1',
        port: options.port,
        ui: options.uiPort !== undefined,
        ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
        ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
        searchAttributes: allSearchAttributeKeys,
        log: { format: 'pretty', level: 'warn' },
        ...(options.uiCodecEndpoint
          ? { extraArgs: ['--ui-codec-endpoint', options.uiCodecEndpoint] }
          : {}),
      },
    });
  } catch (error) {
    throw explainStartFailure(options.cli, error);
  }
}
