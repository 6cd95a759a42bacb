// POST /hooks/{token}: a signal webhook's call, served beside the REST table rather than in it.
// Its token is its only credential (no bearer), its body is JSON declared as application/json or
// text/plain (what TradingView sends depends on the alert's message), and a body that does not
// parse is still a signal to record and list: so the body is read here as text and judged by the
// signals area, which answers 202 or the error envelope. Logs and metrics name the route's
// template, never the token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SIGNAL_HOOK_PATH } from '../../contracts/signals.ts';
import type { Services } from '../services.ts';
import type { RequestState } from '../trpc/context.ts';
import { describeFailure } from '../trpc/errors.ts';
import { BodyTooLargeError, errorBody, mediaTypeOf, readBody, sendError, sendJson, unreadableBody } from './io.ts';

export const HOOK_ROUTE = `${SIGNAL_HOOK_PATH}{token}`;
/** The call's operation in the OpenAPI document (server/http/openapi.ts). */
export const HOOK_OPERATION_ID = 'signalsHook';
const ACCEPTS = ['text/plain'];

export const isHookPath = (pathname: string): boolean => pathname.startsWith(SIGNAL_HOOK_PATH);

export const createHookHandler = (services: Services) => async (req: IncomingMessage, res: ServerResponse, state: RequestState, pathname: string): Promise<void> => {
  state.http.route = HOOK_ROUTE;
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    sendError(res, errorBody('METHOD_NOT_ALLOWED', 'A hook is called with POST'));
    return;
  }
  if (services.halt.isHalted()) {
    sendError(res, errorBody('SERVICE_HALTED', 'The service is halted by an operator'));
    return;
  }
  const unreadable = unreadableBody(req, mediaTypeOf(req), ACCEPTS);
  if (unreadable) {
    // The body stays unread: the connection cannot be reused.
    res.setHeader('Connection', 'close');
    sendError(res, errorBody('UNSUPPORTED_MEDIA_TYPE', unreadable));
    return;
  }
  let body: string;
  try {
    body = (await readBody(req, services.config.BODY_LIMIT_BYTES)).toString('utf8');
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    res.setHeader('Connection', 'close');
    sendError(res, errorBody('PAYLOAD_TOO_LARGE', `Body larger than ${services.config.BODY_LIMIT_BYTES} bytes`));
    return;
  }
  const token = pathname.slice(SIGNAL_HOOK_PATH.length).replace(/\/$/, '');
  try {
    sendJson(res, 202, await services.signals.receive({ token, body, origin: state.origin }));
  } catch (cause) {
    // The procedures' own mapping: a domain error's envelope, the database away 503, else a logged 500.
    const described = describeFailure(cause, (err) => services.logger.error({ err, reqId: state.origin.requestId }, 'a hook call failed'));
    sendError(res, errorBody(described.domainCode, described.message, described.errors), described.retryAfterSec);
  }
};
