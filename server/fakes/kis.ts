// A fake KIS Open API (domestic stock) on 127.0.0.1: the token endpoint with KIS's lifetime and
// its one-issuance-per-minute refusal, cash orders, cancels, the daily order/fill inquiry (paged),
// the balance, the current price and the daily chart, over the books of kis-books.ts; the
// WebSocket approval key (POST /oauth2/Approval) and the real-time price stream of kis-quotes.ts
// on the same server. Every REST call is checked as KIS checks it: appkey and appsecret, a bearer
// token that is live, the tr_id of that call on this domain (paper V…, live T…). Tests drive it
// through prices and fault switches; a user can run it to try real mode on one machine.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KIS_LEGACY_ORDER_TR_IDS, KIS_MSG, KIS_PATHS, KIS_TR_IDS, type KisDailyChartRow, type KisOrderCashRequest, type KisReviseCancelRequest, type KisTokenRequest } from '../brokers/kis/wire.ts';
import type { TTradingMode } from '../brokers/types.ts';
import type { KisApprovalRequest } from '../brokers/kis/quote-wire.ts';
import { keepConnectionsLikeABroker } from './keep-alive.ts';
import { createFakeKisBooks, FakeKisRefusal, type FakeKisAccountSeed } from './kis-books.ts';
import { startFakeKisQuotes } from './kis-quotes.ts';

export interface FakeKisRequest {
  method: string;
  path: string;
  trId: string;
  appKey: string;
  trCont: string;
}

export interface FakeKisOptions {
  /** Which domain the fake plays: its tr_ids are checked against it. Default paper. */
  mode?: TTradingMode;
  accounts?: FakeKisAccountSeed[];
  prices?: Record<string, string>;
  /** A token's lifetime. Default 86400 s (a day), as KIS's. */
  tokenLifetimeSeconds?: number;
  /** The least time between two issuances for one app key. Default 60 s, as KIS's. */
  tokenIssueIntervalMs?: number;
  /** Rows of the daily inquiry per page. Default 15 (KIS's paper page; live is 100). */
  dailyPageSize?: number;
  now?: () => Date;
  /** How often the real-time stream sends each session a PINGPONG. Default 10 s (a test sets it short). */
  pingPongIntervalMs?: number;
  /** Registrations one real-time session may hold. Default KIS's 41. */
  quoteSubscriptionLimit?: number;
  /** The port on 127.0.0.1; an ephemeral one by default. */
  port?: number;
}

/** Which calls a fault waits for: by default the next one, whatever it is. */
export interface FakeKisMatch {
  method?: string;
  path?: string;
}

type Fault = ({ kind: 'status'; status: number; text: string } | { kind: 'hang' } | { kind: 'lose_answer' } | { kind: 'rate_limit' } | { kind: 'refuse'; msgCd: string; message: string }) & { match?: FakeKisMatch };

const matches = (fault: { match?: FakeKisMatch }, method: string, path: string) =>
  (fault.match?.method === undefined || fault.match.method === method) && (fault.match?.path === undefined || fault.match.path === path);

interface IssuedToken {
  appKey: string;
  expiresAt: number;
  revoked: boolean;
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
};

/** Where an answer the network lost is written: nowhere. */
const lostAnswer = { writeHead: () => ({ end: () => undefined }) } as unknown as ServerResponse;

const kstText = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

export const startFakeKis = async (options: FakeKisOptions = {}) => {
  const mode = options.mode ?? 'paper';
  const now = options.now ?? (() => new Date());
  const lifetimeSeconds = options.tokenLifetimeSeconds ?? 86_400;
  const issueIntervalMs = options.tokenIssueIntervalMs ?? 60_000;
  const pageSize = options.dailyPageSize ?? 15;
  const books = createFakeKisBooks(now);
  for (const account of options.accounts ?? []) books.addAccount(account);
  for (const [symbol, price] of Object.entries(options.prices ?? {})) books.setPrice(symbol, price);

  const tokens = new Map<string, IssuedToken>();
  const lastIssuedAt = new Map<string, number>();
  const requests: FakeKisRequest[] = [];
  const faults: Fault[] = [];
  const hung = new Set<ServerResponse>();
  let tokenIssuances = 0;
  let tokenRefusals = 0;
  /** WebSocket approval keys issued: the app key of each, while the fake still knows it. */
  const approvalKeys = new Map<string, string>();
  let approvalIssuances = 0;
  /** While set, approval keys are refused with this message (a test may make it echo the secret). */
  let approvalRefusal: string | undefined;

  /** POST /oauth2/Approval: the secret comes as `secretkey`; a refusal has the token endpoint's shape. */
  const issueApproval = (body: Partial<KisApprovalRequest>): { status: number; body: unknown } => {
    const appKey = body.appkey ?? '';
    if (body.grant_type !== 'client_credentials' || !appKey || books.secretOf(appKey) !== body.secretkey) {
      return { status: 403, body: { error_code: 'EGW00105', error_description: '유효하지 않은 AppSecret입니다.' } };
    }
    if (approvalRefusal !== undefined) return { status: 403, body: { error_code: 'EGW00004', error_description: approvalRefusal } };
    approvalIssuances += 1;
    const approvalKey = randomBytes(18).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
    approvalKeys.set(approvalKey, appKey);
    return { status: 200, body: { approval_key: approvalKey } };
  };

  const trIdOf = (call: keyof typeof KIS_TR_IDS) => KIS_TR_IDS[call][mode];

  const issueToken = (body: Partial<KisTokenRequest>): { status: number; body: unknown } => {
    const appKey = body.appkey ?? '';
    if (body.grant_type !== 'client_credentials' || !appKey || books.secretOf(appKey) !== body.appsecret) {
      return { status: 403, body: { error_code: 'EGW00103', error_description: '유효하지 않은 AppKey입니다.' } };
    }
    const at = now().getTime();
    const last = lastIssuedAt.get(appKey);
    if (last !== undefined && at - last < issueIntervalMs) {
      tokenRefusals += 1;
      return { status: 403, body: { error_code: KIS_MSG.tokenTooSoon, error_description: '접근토큰 발급 잠시 후 다시 시도하세요(1분당 1회)' } };
    }
    lastIssuedAt.set(appKey, at);
    tokenIssuances += 1;
    const accessToken = `fake-kis-token-${randomBytes(24).toString('hex')}`;
    const expiresAt = at + lifetimeSeconds * 1_000;
    tokens.set(accessToken, { appKey, expiresAt, revoked: false });
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: lifetimeSeconds, access_token_token_expired: kstText(expiresAt) } };
  };

  /** The app key of a request whose headers KIS would take, or the refusal it would answer. */
  const authenticate = (request: IncomingMessage): string => {
    const appKey = String(request.headers.appkey ?? '');
    if (!appKey || books.secretOf(appKey) !== request.headers.appsecret) throw new FakeKisRefusal('EGW00105', '유효하지 않은 AppSecret입니다.');
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1] ?? '';
    const token = tokens.get(bearer);
    if (!token || token.appKey !== appKey) throw new FakeKisRefusal(KIS_MSG.tokenInvalid, '유효하지 않은 token 입니다.');
    if (token.revoked || now().getTime() >= token.expiresAt) throw new FakeKisRefusal(KIS_MSG.tokenExpired, '기간이 만료된 token 입니다.');
    return appKey;
  };

  const requireTrId = (request: IncomingMessage, allowed: readonly string[]) => {
    const trId = String(request.headers.tr_id ?? '');
    if (!allowed.includes(trId)) throw new FakeKisRefusal('EGW02006', mode === 'paper' ? `모의투자 TR 이 아닙니다. (${trId})` : `실전투자 TR 이 아닙니다. (${trId})`);
    return trId;
  };

  const requireAccount = (appKey: string, accountNo: string | undefined, productCode: string | undefined) => {
    if (!accountNo || !productCode || books.appKeyOf(accountNo, productCode) !== appKey) throw new FakeKisRefusal('OPSQ2000', 'ERROR : INPUT INVALID_CHECK_ACNO');
    return { accountNo, productCode };
  };

  const ok = (fields: Record<string, unknown>, msg1 = '정상처리 되었습니다.') => ({ rt_cd: '0', msg_cd: 'MCA00000', msg1, ...fields });

  const route = async (request: IncomingMessage, response: ServerResponse, appKey: string): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const path = url.pathname;
    const query = (name: string) => url.searchParams.get(name) ?? '';
    if (path === KIS_PATHS.orderCash && request.method === 'POST') {
      const trId = requireTrId(request, [trIdOf('buy'), trIdOf('sell'), ...KIS_LEGACY_ORDER_TR_IDS.buy, ...KIS_LEGACY_ORDER_TR_IDS.sell]);
      const side = trId === trIdOf('sell') || (KIS_LEGACY_ORDER_TR_IDS.sell as readonly string[]).includes(trId) ? 'sell' : 'buy';
      const body = JSON.parse(await readBody(request)) as KisOrderCashRequest;
      const { accountNo, productCode } = requireAccount(appKey, body.CANO, body.ACNT_PRDT_CD);
      return sendJson(response, 200, ok({ output: books.place(accountNo, productCode, side, body) }, '주문 전송 완료 되었습니다.'));
    }
    if (path === KIS_PATHS.orderReviseCancel && request.method === 'POST') {
      requireTrId(request, [trIdOf('reviseCancel')]);
      const body = JSON.parse(await readBody(request)) as KisReviseCancelRequest;
      const { accountNo, productCode } = requireAccount(appKey, body.CANO, body.ACNT_PRDT_CD);
      return sendJson(response, 200, ok({ output: books.cancel(accountNo, productCode, body) }, '주문 전송 완료 되었습니다.'));
    }
    if (path === KIS_PATHS.dailyOrders && request.method === 'GET') {
      requireTrId(request, [trIdOf('dailyOrders')]);
      const { accountNo, productCode } = requireAccount(appKey, query('CANO'), query('ACNT_PRDT_CD'));
      if (query('INQR_STRT_DT') !== query('INQR_END_DT')) throw new FakeKisRefusal('OPSQ2001', 'the fake answers one day at a time');
      const rows = books.dailyRows(accountNo, productCode, query('INQR_STRT_DT'), query('ODNO'));
      // The continuation key is the offset of the next page; tr_cont N asks for it.
      const offset = request.headers.tr_cont === 'N' ? Number(query('CTX_AREA_NK100') || '0') : 0;
      const page = rows.slice(offset, offset + pageSize);
      const more = offset + pageSize < rows.length;
      const sum = (field: 'ord_qty' | 'tot_ccld_qty' | 'tot_ccld_amt') => String(page.reduce((total, row) => total + Number(row[field]), 0));
      return sendJson(
        response,
        200,
        ok({
          ctx_area_fk100: `${accountNo}^${productCode}^${query('INQR_STRT_DT')}`,
          ctx_area_nk100: more ? String(offset + pageSize) : '',
          output1: page,
          output2: { tot_ord_qty: sum('ord_qty'), tot_ccld_qty: sum('tot_ccld_qty'), tot_ccld_amt: sum('tot_ccld_amt'), prsm_tlex_smtl: '0', pchs_avg_pric: '0' },
        }),
        { tr_cont: more ? 'M' : 'D' },
      );
    }
    if (path === KIS_PATHS.balance && request.method === 'GET') {
      requireTrId(request, [trIdOf('balance')]);
      const { accountNo, productCode } = requireAccount(appKey, query('CANO'), query('ACNT_PRDT_CD'));
      const { holdings, totals } = books.balance(accountNo, productCode);
      return sendJson(response, 200, ok({ ctx_area_fk100: '', ctx_area_nk100: '', output1: holdings, output2: [totals] }), { tr_cont: 'D' });
    }
    if (path === KIS_PATHS.price && request.method === 'GET') {
      requireTrId(request, [trIdOf('price')]);
      const price = books.priceOf(query('FID_INPUT_ISCD'));
      // KIS answers an unknown code with success and empty fields.
      return sendJson(response, 200, ok({ output: { stck_prpr: price ? price.toFixed(0) : '', stck_shrn_iscd: query('FID_INPUT_ISCD') } }));
    }
    if (path === KIS_PATHS.dailyChart && request.method === 'GET') {
      requireTrId(request, [trIdOf('dailyChart')]);
      const symbol = query('FID_INPUT_ISCD');
      return sendJson(response, 200, ok({ output1: { stck_shrn_iscd: symbol }, output2: books.chart(symbol, query('FID_INPUT_DATE_1'), query('FID_INPUT_DATE_2')) }));
    }
    return sendJson(response, 404, { rt_cd: '1', msg_cd: 'EGW00002', msg1: '서비스가 존재하지 않습니다.' });
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const seen: FakeKisRequest = { method: request.method ?? '', path, trId: String(request.headers.tr_id ?? ''), appKey: String(request.headers.appkey ?? ''), trCont: String(request.headers.tr_cont ?? '') };
    requests.push(seen);
    void (async () => {
      try {
        if (path === KIS_PATHS.token && request.method === 'POST') {
          const body = JSON.parse((await readBody(request)) || '{}') as Partial<KisTokenRequest>;
          // The token request carries its app key in the body.
          seen.appKey = body.appkey ?? '';
          const answer = issueToken(body);
          return sendJson(response, answer.status, answer.body);
        }
        if (path === KIS_PATHS.approval && request.method === 'POST') {
          const body = JSON.parse((await readBody(request)) || '{}') as Partial<KisApprovalRequest>;
          seen.appKey = body.appkey ?? '';
          const answer = issueApproval(body);
          return sendJson(response, answer.status, answer.body);
        }
        // Faults hit the calls after the token: the token endpoint has its own refusals.
        const index = faults.findIndex((candidate) => matches(candidate, request.method ?? '', path));
        const fault = index < 0 ? undefined : faults.splice(index, 1)[0];
        if (fault?.kind === 'hang') return void hung.add(response);
        if (fault?.kind === 'lose_answer') {
          // The call is carried out as KIS would (an order is taken), and its answer goes nowhere:
          // the connection drops. At once, rather than held open until the client's timeout, so a
          // test needs no short timeout (which its calls that are answered would race).
          await route(request, lostAnswer, authenticate(request)).catch(() => undefined);
          return void response.destroy();
        }
        if (fault?.kind === 'status') return void response.writeHead(fault.status, { 'content-type': 'text/html' }).end(fault.text);
        if (fault?.kind === 'rate_limit') return sendJson(response, 500, { rt_cd: '1', msg_cd: KIS_MSG.rateLimited, msg1: '초당 거래건수를 초과하였습니다.' });
        if (fault?.kind === 'refuse') return sendJson(response, 500, { rt_cd: '1', msg_cd: fault.msgCd, msg1: fault.message });
        await route(request, response, authenticate(request));
      } catch (error) {
        if (error instanceof FakeKisRefusal) sendJson(response, error.status, { rt_cd: '1', msg_cd: error.msgCd, msg1: error.message });
        else sendJson(response, 500, { rt_cd: '1', msg_cd: 'EGW00001', msg1: error instanceof Error ? error.message : 'internal error' });
      }
    })();
  });

  const quotes = startFakeKisQuotes({
    server,
    books,
    now,
    approvalOwner: (approvalKey) => approvalKeys.get(approvalKey),
    pingPongIntervalMs: options.pingPongIntervalMs ?? 10_000,
    ...(options.quoteSubscriptionLimit !== undefined ? { maxSubscriptions: options.quoteSubscriptionLimit } : {}),
  });

  keepConnectionsLikeABroker(server);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    mode,
    books,
    requests,
    addAccount: books.addAccount,
    setPrice: books.setPrice,
    setBars: (symbol: string, rows: KisDailyChartRow[]) => books.setBars(symbol, rows),
    get tokenIssuances() {
      return tokenIssuances;
    },
    /** Issuances refused as within a minute of the last. */
    get tokenRefusals() {
      return tokenRefusals;
    },
    /** KIS ends every token issued so far before its time (answers EGW00123 to them). */
    expireTokens: () => {
      for (const token of tokens.values()) token.revoked = true;
    },
    /** Lets the next issuance for the key through at once, as if a minute had passed. */
    allowTokenIssue: (appKey: string) => void lastIssuedAt.delete(appKey),
    /** The real-time price stream: its sessions, trades, PINGPONGs and faults (kis-quotes.ts). */
    quotes,
    get approvalIssuances() {
      return approvalIssuances;
    },
    /** Refuses every approval key asked for from now on with this message (403); undefined issues them again. */
    refuseApprovals: (message: string | undefined) => void (approvalRefusal = message),
    /** Forgets every approval key issued so far: the stream answers OPSP0011 to a request carrying one. */
    forgetApprovals: () => approvalKeys.clear(),
    /** The next call (not a token issuance) answers this status with a body that is not KIS's. */
    failNext: (status = 503, text = '<html>Service Unavailable</html>', match?: FakeKisMatch) => void faults.push({ kind: 'status', status, text, ...(match ? { match } : {}) }),
    /** The next call is never answered. */
    hangNext: () => void faults.push({ kind: 'hang' }),
    /**
     * The next call (matching `match`) is carried out, an order placed, but its answer is lost:
     * the connection drops before the caller hears anything, as when the network drops KIS's answer.
     */
    loseAnswerNext: (match?: FakeKisMatch) => void faults.push({ kind: 'lose_answer', ...(match ? { match } : {}) }),
    /** The next `times` calls answer EGW00201 (too many requests a second), HTTP 500 as KIS does. */
    rateLimitNext: (times = 1) => {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'rate_limit' });
    },
    /** The next call answers a KIS refusal with this msg_cd and msg1. */
    refuseNext: (msgCd: string, message: string) => void faults.push({ kind: 'refuse', msgCd, message }),
    close: async () => {
      quotes.close();
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeKis = Awaited<ReturnType<typeof startFakeKis>>;
