// The crypto exchange adapter (ccxt): what the rest of the service imports.
export { createCcxtBroker, CCXT_QUOTE, type CcxtBroker, type CcxtBrokerOptions } from './adapter.ts';
export { brokerErrorOf, toCcxtOrder, decimalText, ccxtBrokerOrderId, parseCcxtBrokerOrderId } from './mapping.ts';
export { createHostPacing, apiHostOf, type HostPacing } from './host-pacing.ts';
export { clientOrderIdRuleOf, createMemoryClientIdStore, toExchangeClientOrderId, type CcxtClientIdStore, type ClientOrderIdRule } from './client-ids.ts';
export { unknownCcxtExchangeIds } from './load.ts';
export { createPlacedOrders, type CcxtPlacedOrders } from './poller.ts';
