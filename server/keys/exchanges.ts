// The crypto exchange a key trades on: the ccxt exchange id it names, or the service's default
// (CRYPTO_EXCHANGE_ID) for `crypto_exchange`; only the ids the service allows (CRYPTO_EXCHANGE_IDS).
import { EXCHANGE_OF_ASSET_CLASS } from '../../contracts/keys.ts';

export interface CryptoExchanges {
  /** CRYPTO_EXCHANGE_ID: what `crypto_exchange` means. */
  fallback: string;
  /** CRYPTO_EXCHANGE_IDS (the fallback among them). */
  allowed: readonly string[];
}

export const cryptoExchangesOf = (config: { CRYPTO_EXCHANGE_ID: string; CRYPTO_EXCHANGE_IDS: readonly string[] }): CryptoExchanges => ({
  fallback: config.CRYPTO_EXCHANGE_ID,
  allowed: config.CRYPTO_EXCHANGE_IDS,
});

/** The ccxt exchange id a crypto key's `exchange` stands for, or undefined when the service does not allow it. */
export const cryptoExchangeOf = (named: string, exchanges: CryptoExchanges): string | undefined => {
  const id = named === EXCHANGE_OF_ASSET_CLASS.crypto ? exchanges.fallback : named;
  return exchanges.allowed.includes(id) ? id : undefined;
};
