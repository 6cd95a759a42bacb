// A KIS key as the tests make one: fresh app credentials for the fake KIS, the body that registers
// it through the API, and the settings of a service in real mode against that fake.
import { randomBytes } from 'node:crypto';

export interface KisTestKey {
  appKey: string;
  appSecret: string;
  accountNo: string;
  productCode: string;
}

/** Fresh credentials for one account of the fake KIS (KIS's paper app keys start with PS). */
export const newKisKey = (tag: string, accountNo: string): KisTestKey => ({
  appKey: `PS${tag.toUpperCase()}${randomBytes(6).toString('hex')}`,
  appSecret: `kis-secret-${randomBytes(24).toString('hex')}`,
  accountNo,
  productCode: '01',
});

/** The body of POST /api/exchange-keys that registers the key for the fake KIS at `baseUrl`. */
export const kisKeyBody = (key: KisTestKey, baseUrl: string) => ({
  asset_class: 'kr_equity',
  exchange: 'kr_broker',
  paper_mode: true,
  account_no: `${key.accountNo}-${key.productCode}`,
  account_product_code: key.productCode,
  api_key: key.appKey,
  api_secret: key.appSecret,
  base_url: baseUrl,
});

/** A service in real mode whose Korean broker is the fake KIS at `kisUrl`, polled briskly, with no worker jobs of its own. */
export const kisRealModeEnv = (kisUrl: string): Record<string, string> => ({
  BROKER_MODE: 'real',
  BROKER_BASE_URLS: `kr_broker:paper=${kisUrl}`,
  BROKER_KR_POLL_INTERVAL_MS: '200',
  BROKER_KR_REQUESTS_PER_SEC: '50',
  RISK_MARKET_HOURS: 'ignore',
  SIM_TICK_INTERVAL_MS: '0',
  WORKERS_IN_PROCESS: 'false',
});
