// The e-mail channel: one plain-text message per alert to every operator address, through SMTP
// (nodemailer). The password goes to nodemailer only; failures are logged without it.
import nodemailer, { type NodemailerError } from 'nodemailer';
import { abortFailure, type AttemptResult, type Channel, type QueuedAlert } from './channel.ts';
import { secretScrubber } from './redaction.ts';

export interface SmtpSettings {
  host: string;
  port: number;
  /** Empty: no authentication. */
  user: string;
  password: string;
  /** The From address; SMTP_USER when empty. */
  from: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export const emailBody = (alert: QueuedAlert): string => {
  const facts = [`${alert.severity}: ${alert.kind}`, `at: ${alert.at}`];
  const data = Object.keys(alert.data).length > 0 ? `\n\n${JSON.stringify(alert.data, null, 2)}` : '';
  return `${alert.text}\n\n${facts.join('\n')}${data}\n`;
};

/** One message to some addresses; resolves when the relay accepted it, rejects with nodemailer's error. */
export interface Mailer {
  send(message: { to: readonly string[]; subject: string; text: string; signal?: AbortSignal }): Promise<void>;
  /** The password (and its base64 form, as AUTH PLAIN sends it) scrubbed out of a failure's text. */
  scrub(text: string): string;
  close(): void;
}

/** The SMTP transport the alerts and the live confirm token share (nodemailer). */
export const createMailer = ({ smtp, attemptTimeoutMs }: { smtp: SmtpSettings; attemptTimeoutMs: number }): Mailer => {
  const secure = smtp.port === 465;
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure,
    // Credentials never cross the network in clear text, except to a relay on this machine.
    requireTLS: !secure && smtp.user !== '' && !LOOPBACK_HOSTS.has(smtp.host.toLowerCase()),
    ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password } } : {}),
    connectionTimeout: attemptTimeoutMs,
    greetingTimeout: attemptTimeoutMs,
    socketTimeout: attemptTimeoutMs,
    // Message text is plain data: never let it name a file or URL for nodemailer to read.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });
  return {
    send: async ({ to, subject, text, signal }) => {
      await transport.sendMail({ from: smtp.from || smtp.user, to: [...to], subject, text, ...(signal ? { signal } : {}) });
    },
    scrub: secretScrubber([smtp.password, Buffer.from(smtp.password).toString('base64')]),
    close: () => transport.close(),
  };
};

export const createEmailChannel = (options: { smtp: SmtpSettings; to: readonly string[]; attemptTimeoutMs: number }): Channel => {
  const { smtp, to, attemptTimeoutMs } = options;
  const mailer = createMailer({ smtp, attemptTimeoutMs });
  return {
    name: 'email',
    target: `${smtp.host}:${smtp.port}`,
    attempt: async (alert, signal): Promise<AttemptResult> => {
      try {
        await mailer.send({ to, subject: alert.title, text: emailBody(alert), signal });
        return { ok: true };
      } catch (error) {
        const aborted = abortFailure(signal);
        if (aborted) return aborted;
        const failed = error as NodemailerError;
        return {
          ok: false,
          // nodemailer marks 5xx replies (but 503) as permanent: the same message would be refused again.
          permanent: failed.permanent === true,
          failure: {
            reason: 'smtp',
            ...(typeof failed.code === 'string' ? { code: failed.code } : {}),
            ...(typeof failed.responseCode === 'number' ? { responseCode: failed.responseCode } : {}),
            message: mailer.scrub(error instanceof Error ? error.message : String(error)),
          },
        };
      }
    },
    close: () => mailer.close(),
  };
};
