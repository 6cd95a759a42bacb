// `npm run fake-brokers`: the fake Alpaca-style, KIS-style and Binance brokers on 127.0.0.1, each
// with one paper account and the seeded universe's reference prices, so real mode can be tried on
// one machine. Prints the service settings and the keys to register; stops on SIGINT or SIGTERM.
// Ports: FAKE_ALPACA_PORT, FAKE_KIS_PORT and FAKE_BINANCE_PORT (ephemeral when unset).
import { randomBytes } from 'node:crypto';
import { startFakeAlpaca } from '../server/fakes/alpaca.ts';
import { startFakeBinance } from '../server/fakes/binance.ts';
import { startFakeKis } from '../server/fakes/kis.ts';
import { INSTRUMENT_UNIVERSE } from '../server/instruments/universe.ts';

const portOf = (name: string): number => {
  const text = process.env[name]?.trim() ?? '';
  if (text === '') return 0;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${name} must be a port number (0-65535)`);
  return port;
};

const pricesOf = (assetClass: 'us_equity' | 'kr_equity') =>
  Object.fromEntries(INSTRUMENT_UNIVERSE.filter((instrument) => instrument.asset_class === assetClass).map((instrument) => [instrument.symbol, instrument.reference_price]));

// Fresh secrets every run: nothing here is a credential of anything real.
const alpacaKey = { keyId: `PKFAKE${randomBytes(6).toString('hex').toUpperCase()}`, secretKey: randomBytes(24).toString('base64url') };
const binanceKey = { apiKey: randomBytes(16).toString('hex'), secret: randomBytes(32).toString('hex') };
const kisKey = { appKey: `PSFAKE${randomBytes(8).toString('hex')}`, appSecret: randomBytes(48).toString('base64url'), accountNo: '50000001', productCode: '01' };

const alpaca = await startFakeAlpaca({ port: portOf('FAKE_ALPACA_PORT'), accounts: [{ ...alpacaKey, cash: '100000' }], prices: pricesOf('us_equity') });
const kis = await startFakeKis({ port: portOf('FAKE_KIS_PORT'), mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: pricesOf('kr_equity') });
// The fake lists BTC/USDT and ETH/USDT, priced from the universe (Binance writes them BTCUSDT).
const cryptoPrice = (symbol: string) => INSTRUMENT_UNIVERSE.find((instrument) => instrument.symbol === symbol)?.reference_price ?? '1';
const binance = await startFakeBinance({
  port: portOf('FAKE_BINANCE_PORT'),
  accounts: [{ ...binanceKey, balances: { USDT: '100000' } }],
  prices: { BTCUSDT: cryptoPrice('BTC/USDT'), ETHUSDT: cryptoPrice('ETH/USDT') },
});

const lines = [
  'Fake brokers are up on 127.0.0.1 (paper accounts, reference prices of the seeded universe).',
  '',
  'Start the service with:',
  `  BROKER_MODE=real \\`,
  `  BROKER_BASE_URLS=us_broker:paper=${alpaca.url},kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url} \\`,
  '  CRYPTO_EXCHANGE_ID=binance \\',
  `  BROKER_US_DATA_URL=${alpaca.url} \\`,
  '  npm start',
  '',
  'Then register these keys (POST /api/exchange-keys, or the console\'s Keys page):',
  `  ${JSON.stringify({ asset_class: 'us_equity', exchange: 'us_broker', api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url, paper_mode: true })}`,
  `  ${JSON.stringify({ asset_class: 'kr_equity', exchange: 'kr_broker', api_key: kisKey.appKey, api_secret: kisKey.appSecret, account_no: `${kisKey.accountNo}-${kisKey.productCode}`, account_product_code: kisKey.productCode, base_url: kis.url, paper_mode: true })}`,
  `  ${JSON.stringify({ asset_class: 'crypto', exchange: 'crypto_exchange', api_key: binanceKey.apiKey, api_secret: binanceKey.secret, base_url: binance.url, paper_mode: true })}`,
  '',
  'Crypto trades BTC/USDT and ETH/USDT on the fake Binance (through ccxt). Ctrl-C stops the fakes.',
];
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([alpaca.close(), kis.close(), binance.close()]);
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
