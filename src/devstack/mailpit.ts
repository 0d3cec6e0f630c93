import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { freePort } from './free-port.js';
import { acceptsConnections, superviseServer, waitUntilReady } from './server-process.js';
import { defaultProgress, goInstalled, resolveBinary, type Progress } from './temporal-binaries.js';

/**
 * Mailpit, the SMTP server of development and tests: it keeps every e-mail the service sends and
 * shows them in a web UI and an HTTP API (where the tests read signing codes). Built with
 * `go install` like MinIO and cached outside the repository; MAILPIT_PATH points at a binary of
 * your own instead.
 */
export const MAILPIT_VERSION = 'v1.27.11';

const mailpit = goInstalled({
  what: 'Mailpit',
  envVar: 'MAILPIT_PATH',
  module: `github.com/axllent/mailpit@${MAILPIT_VERSION}`,
  folder: `mailpit-${MAILPIT_VERSION}`,
  artifact: 'mailpit',
  duration: 'about a minute',
  orElse: 'point SMTP_URL at an SMTP server of your own.',
});

export const resolveMailpit = (progress: Progress = defaultProgress) =>
  resolveBinary(mailpit, progress);

export interface MailpitServer {
  /** What the mailer is given, e.g. smtp://127.0.0.1:1025. */
  smtpUrl: string;
  /** The web UI, where a developer reads the mail. */
  webUrl: string;
  /** The HTTP API's base, e.g. http://127.0.0.1:8025/api/v1 (test/helpers/mailbox.ts reads it). */
  apiUrl: string;
  /** What the API and the worker need to use it. */
  env: { SMTP_URL: string };
  /** The server process (a test can stop it to see sending fail). */
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface MailpitOptions {
  smtpPort?: number;
  /** The web UI and HTTP API. */
  uiPort?: number;
  /** Where messages are kept across restarts; none (a temporary file Mailpit removes) by default. */
  dataFile?: string;
  progress?: Progress;
}

/**
 * Starts Mailpit with SMTP and HTTP on loopback only and everything that would reach the internet
 * off (version check, reverse DNS of the SMTP client, remote CSS and fonts in the UI). Accepts any
 * SMTP credentials, so an SMTP_URL with a user and password works against it as against a relay.
 * Resolves once it answers.
 */
export async function startMailpit(options: MailpitOptions = {}): Promise<MailpitServer> {
  const progress = options.progress ?? defaultProgress;
  const binary = await resolveMailpit(progress);
  if (binary.executable.type !== 'existing-path') throw new Error('Mailpit binary not resolved');
  const smtpPort = options.smtpPort ?? (await freePort());
  const uiPort = options.uiPort ?? (await freePort());
  if (options.dataFile) await mkdir(dirname(options.dataFile), { recursive: true });
  const webUrl = `http://127.0.0.1:${uiPort}`;
  const child = spawn(
    binary.executable.path,
    [
      '--smtp',
      `127.0.0.1:${smtpPort}`,
      '--listen',
      `127.0.0.1:${uiPort}`,
      ...(options.dataFile ? ['--database', options.dataFile] : []),
      '--quiet',
      '--disable-version-check',
      '--smtp-disable-rdns',
      '--block-remote-css-and-fonts',
      '--smtp-auth-accept-any',
      '--smtp-auth-allow-insecure',
    ],
    // Its MP_* variables would override the flags above (MP_SMTP_RELAY_ALL among them): none pass.
    { env: withoutMailpitVariables(process.env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { exited, stop } = superviseServer(child, 'Mailpit');
  try {
    // Both listeners up: the HTTP API answers /readyz and the SMTP port takes connections.
    await Promise.race([
      waitUntilReady(
        'Mailpit',
        webUrl,
        async () => (await fetch(`${webUrl}/readyz`)).ok && (await acceptsConnections(smtpPort)),
      ),
      exited,
    ]);
  } catch (error) {
    await stop();
    throw error;
  }

  const smtpUrl = `smtp://127.0.0.1:${smtpPort}`;
  return {
    smtpUrl,
    webUrl,
    apiUrl: `${webUrl}/api/v1`,
    env: { SMTP_URL: smtpUrl },
    process: child,
    stop,
  };
}

function withoutMailpitVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('MP_')));
}
