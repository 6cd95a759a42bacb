// ccxt, loaded on first use: it is large, and a service that trades no crypto never pays for it.
import type * as Ccxt from 'ccxt';

export type CcxtModule = typeof Ccxt;

let loading: Promise<CcxtModule> | undefined;
let loaded: CcxtModule | undefined;
export const loadCcxt = () =>
  (loading ??= import('ccxt').then((ccxt) => {
    loaded = ccxt;
    return ccxt;
  }));
/** ccxt if it has loaded, without loading it (real mode loads it at start-up: see unknownCcxtExchangeIds). */
export const loadedCcxt = (): CcxtModule | undefined => loaded;

/** Whether ccxt has an exchange class of this id (its own list: no network). */
export const isCcxtExchangeId = (ccxt: CcxtModule, id: string): boolean => {
  // Typed as an object of classes, exported as the list of ids at run time.
  const ids = ccxt.exchanges as unknown as readonly string[] | Record<string, unknown>;
  const listed = Array.isArray(ids) ? ids.includes(id) : Object.hasOwn(ids, id);
  // ccxt's classes are reached by id at run time; its types name each class separately, not as an index.
  return listed && typeof (ccxt as unknown as Record<string, unknown>)[id] === 'function';
};

/** The ids among these that ccxt has no exchange for. */
export const unknownCcxtExchangeIds = async (ids: readonly string[]): Promise<string[]> => {
  const ccxt = await loadCcxt();
  return ids.filter((id) => !isCcxtExchangeId(ccxt, id));
};
