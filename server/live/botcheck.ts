// The bot check on live enable: the client's Turnstile/hCaptcha token verified with the
// provider's siteverify call (a form POST of secret, response and remoteip; the answer is JSON
// with `success`). Skipped when BOTCHECK_SECRET_KEY is empty. A verifier that cannot be reached or
// answers nonsense fails the check (403 BOTCHECK_FAILED): enabling live trading fails closed.
import { AppError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';

/** One verification's limit: the caller waits on it. */
const VERIFY_TIMEOUT_MS = 5_000;

export interface BotCheck {
  /** Throws 403 BOTCHECK_FAILED unless the token verifies (or the check is off). */
  verify(opts: { token: string | undefined; remoteIp: string | undefined }): Promise<void>;
}

export const createBotCheck = ({ secret, verifyUrl, logger }: { secret: string; verifyUrl: string; logger: Logger }): BotCheck => ({
  verify: async ({ token, remoteIp }) => {
    if (!secret) return;
    if (!token) throw new AppError('BOTCHECK_FAILED', 'The bot check is required: send botcheck_token');
    const form = new URLSearchParams({ secret, response: token });
    if (remoteIp) form.set('remoteip', remoteIp);
    let success = false;
    try {
      const response = await fetch(verifyUrl, { method: 'POST', body: form, signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS), redirect: 'error' });
      const answer = (await response.json()) as { success?: unknown; 'error-codes'?: unknown };
      success = response.ok && answer.success === true;
      if (!success) logger.info({ status: response.status, errorCodes: answer['error-codes'] }, 'bot check refused');
    } catch (error) {
      // The secret is in the body only, never in the URL or this line.
      logger.warn({ err: error instanceof Error ? { type: error.name, message: error.message } : String(error) }, 'bot check verifier unreachable: refusing');
      throw new AppError('BOTCHECK_FAILED', 'The bot check could not be verified; try again');
    }
    if (!success) throw new AppError('BOTCHECK_FAILED', 'The bot check failed');
  },
});
