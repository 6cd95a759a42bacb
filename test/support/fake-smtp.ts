// An SMTP sink on 127.0.0.1 for the alerts tests (smtp-server): keeps every message it accepts,
// with its envelope, subject and text; optionally requires a login.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SinkMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

export interface FakeSmtpOptions {
  /** When set, a login with exactly these is required. */
  auth?: { user: string; password: string };
}

/** Headers unfolded; the body decoded when quoted-printable (nodemailer's choice for long lines). */
const parseMessage = (raw: string): { subject: string; text: string } => {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const quotedPrintable = header('Content-Transfer-Encoding').toLowerCase() === 'quoted-printable';
  const text = quotedPrintable
    ? Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')
    : body;
  return { subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
};

export const startFakeSmtp = async (options: FakeSmtpOptions = {}) => {
  const messages: SinkMessage[] = [];
  let refusedLogins = 0;
  const server = new SMTPServer({
    secure: false,
    // No TLS on a loopback sink: nodemailer would refuse smtp-server's self-signed certificate.
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    logger: false,
    onAuth: (auth, _session, callback) => {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.password) {
        callback(null, { user: auth.username });
        return;
      }
      refusedLogins += 1;
      callback(new Error('Invalid username or password'));
    },
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({ from, to: session.envelope.rcptTo.map((rcpt) => rcpt.address), ...parseMessage(raw), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    messages,
    refusedLogins: () => refusedLogins,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

export type FakeSmtp = Awaited<ReturnType<typeof startFakeSmtp>>;
