// Our client order ids as an exchange takes them. Ours are up to 64 letters, digits and `. _ : -`
// (contracts/orders.ts); exchanges take fewer (Binance: `^[.A-Z:/a-z0-9_-]{1,36}$`). The mapping
// is a pure function of our id and the exchange's rule, so nothing needs storing to place or find
// an order by our id: an id the exchange takes goes unchanged; any other goes as a digest form (a
// prefix and base32 of its SHA-256) of fixed length. The two never meet: a digest form either
// carries a character ours never have (Binance's `/`), or, where the exchange takes no such
// character, an id of ours shaped like a digest form is sent as its own digest form. Reading an
// order back, an id not in digest form is ours as it is; a digest form is looked up (clientIds in
// the adapter's options: what this process placed, then the orders table by broker order id).
import { createHash } from 'node:crypto';

/** What an exchange accepts as a client order id, and the digest form used for the rest. */
export interface ClientOrderIdRule {
  maxLength: number;
  /** Every character of an accepted id. */
  characters: RegExp;
  /** Starts every digest form; characters the exchange accepts. */
  digestPrefix: string;
}

/** RFC 4648 base32, lower case: letters and digits only, so every exchange takes it. */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** 32 base32 characters: 160 bits of the SHA-256, more than any account's orders will ever need. */
const DIGEST_BODY_MAX = 32;

/**
 * The rules we know, by ccxt exchange id. Binance documents `newClientOrderId` as
 * `^[\.A-Z\:/a-z0-9_-]{1,36}$` (Binance.US is the same API); its `/` is never in our ids, so it
 * marks the digest form.
 */
const KNOWN_RULES: Record<string, ClientOrderIdRule> = {
  binance: { maxLength: 36, characters: /^[.A-Z:/a-z0-9_-]+$/, digestPrefix: 'h/' },
  binanceus: { maxLength: 36, characters: /^[.A-Z:/a-z0-9_-]+$/, digestPrefix: 'h/' },
};

/**
 * Any other exchange: ccxt does not say what its client ids may be, so ids are kept to what the
 * exchanges ccxt lists commonly take (OKX's clOrdId, the narrowest of the large ones: 32 letters
 * and digits). An exchange with a format of its own (a required prefix, a UUID) needs its entry above.
 */
export const DEFAULT_CLIENT_ORDER_ID_RULE: ClientOrderIdRule = { maxLength: 32, characters: /^[A-Za-z0-9]+$/, digestPrefix: 'h' };

export const clientOrderIdRuleOf = (exchangeId: string): ClientOrderIdRule => KNOWN_RULES[exchangeId] ?? DEFAULT_CLIENT_ORDER_ID_RULE;

const digestLength = (rule: ClientOrderIdRule) => rule.digestPrefix.length + Math.min(DIGEST_BODY_MAX, rule.maxLength - rule.digestPrefix.length);

const base32 = (bytes: Buffer): string => {
  let text = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return bits > 0 ? text + BASE32[(value << (5 - bits)) & 31] : text;
};

/** Whether an exchange's client order id is in digest form (so not one of ours as it is). */
export const isDigestClientOrderId = (id: string, rule: ClientOrderIdRule): boolean =>
  id.length === digestLength(rule) && id.startsWith(rule.digestPrefix) && [...id.slice(rule.digestPrefix.length)].every((char) => BASE32.includes(char));

/** The id the exchange is sent for ours: ours when the exchange takes it, else its digest form. */
export const toExchangeClientOrderId = (ours: string, rule: ClientOrderIdRule): string => {
  if (ours.length <= rule.maxLength && rule.characters.test(ours) && !isDigestClientOrderId(ours, rule)) return ours;
  const body = base32(createHash('sha256').update(ours, 'utf8').digest());
  return rule.digestPrefix + body.slice(0, digestLength(rule) - rule.digestPrefix.length);
};

/** Where the adapter finds our id for a digest form it reads back. */
export interface CcxtClientIdStore {
  /** An order this process is placing: its digest form and our id. */
  put(exchangeClientOrderId: string, ours: string): void;
  /** Our id for a digest form, by the order's broker order id; undefined when not known (yet). */
  find(exchangeClientOrderId: string, brokerOrderId: string): Promise<string | undefined>;
}

/** The placements of the last while, in memory: enough for one process's own orders. */
export const createMemoryClientIdStore = (limit = 1_000): CcxtClientIdStore => {
  const recent = new Map<string, string>();
  return {
    put: (exchangeClientOrderId, ours) => {
      recent.delete(exchangeClientOrderId);
      recent.set(exchangeClientOrderId, ours);
      // A Map keeps insertion order: the oldest placement goes first.
      if (recent.size > limit) recent.delete(recent.keys().next().value!);
    },
    find: (exchangeClientOrderId) => Promise.resolve(recent.get(exchangeClientOrderId)),
  };
};
