// The names the OpenAPI document gives the shared wire shapes (its components), so that a client
// generated from it has named types (`components["schemas"]["Order"]`) rather than anonymous ones.
// Registered on the schemas themselves (zod's global registry), which the document's generator reads.
import { z } from 'zod';
import { ZAdminOverview, ZAdminUserDetail, ZCriticalAlert, ZCriticalAlertList, ZHaltState, ZUserList } from './admin.ts';
import { ZAnalyzeResponse, ZReport, ZReportDetail, ZReportList, ZTrace, ZTraceList } from './analysis.ts';
import { ZAdminAuditList, ZAdminAuditRecord, ZAuditList, ZAuditRecord } from './audit.ts';
import { ZApiKey, ZApiKeyCreated, ZApiKeyList, ZSession, ZSessionList, ZTokenResponse, ZUserResponse } from './auth.ts';
import { ZBacktestList, ZBacktestResult, ZBacktestSummary, ZBacktestTrade, ZStrategyInfo, ZStrategyList, ZSweepList, ZSweepResult, ZSweepSummary, ZWalkForwardResult } from './backtest.ts';
import { ZBotDrift, ZBotDriftRow, ZBotRun, ZBotRunList, ZBotStatus, ZBotTrade, ZBotTradeList } from './bot.ts';
import { ZInstrument, ZInstrumentList } from './instruments.ts';
import { ZExchangeKeyResponse, ZExchangeKeyTestResponse } from './keys.ts';
import { ZLiveReadiness, ZLiveStatus } from './live.ts';
import { ZOhlcvBar, ZOhlcvResponse } from './marketdata.ts';
import { ZNotificationChannel, ZNotificationChannelCreated, ZNotificationChannelList, ZNotificationTestResult } from './notifications.ts';
import { ZCancelAllResult, ZOrderList, ZOrderPreview, ZOrderResponse, ZPosition, ZPositionList } from './orders.ts';
import { ZActivityFill, ZActivityFlow, ZActivityList, ZActivityLot, ZPerformance, ZPortfolioHistory, ZPortfolioPoint, ZSymbolPerformance } from './portfolio.ts';
import { ZAccountResponse } from './simulator.ts';
import { ZSignalWebhook, ZSignalWebhookCreated, ZSignalWebhookList, ZWebhookSignal, ZWebhookSignalList } from './signals.ts';

const NAMES: ReadonlyArray<readonly [z.ZodType, string]> = [
  [ZOrderResponse, 'Order'],
  [ZOrderList, 'OrderList'],
  [ZOrderPreview, 'OrderPreview'],
  [ZCancelAllResult, 'CancelAllResult'],
  [ZPosition, 'Position'],
  [ZPositionList, 'PositionList'],
  [ZAccountResponse, 'Account'],
  [ZPortfolioHistory, 'PortfolioHistory'],
  [ZPortfolioPoint, 'PortfolioPoint'],
  [ZPerformance, 'Performance'],
  [ZSymbolPerformance, 'SymbolPerformance'],
  [ZActivityFill, 'ActivityFill'],
  [ZActivityLot, 'ActivityLot'],
  [ZActivityFlow, 'ActivityFlow'],
  [ZActivityList, 'ActivityList'],
  [ZTokenResponse, 'TokenResponse'],
  [ZUserResponse, 'User'],
  [ZSession, 'Session'],
  [ZSessionList, 'SessionList'],
  [ZExchangeKeyResponse, 'ExchangeKey'],
  [ZExchangeKeyTestResponse, 'ExchangeKeyTest'],
  [ZInstrument, 'Instrument'],
  [ZInstrumentList, 'InstrumentList'],
  [ZOhlcvBar, 'OhlcvBar'],
  [ZOhlcvResponse, 'OhlcvBars'],
  [ZBacktestResult, 'BacktestResult'],
  [ZBacktestSummary, 'BacktestSummary'],
  [ZBacktestList, 'BacktestList'],
  [ZBacktestTrade, 'BacktestTrade'],
  [ZStrategyInfo, 'Strategy'],
  [ZStrategyList, 'StrategyList'],
  [ZSweepResult, 'SweepResult'],
  [ZSweepSummary, 'SweepSummary'],
  [ZSweepList, 'SweepList'],
  [ZWalkForwardResult, 'WalkForwardResult'],
  [ZAnalyzeResponse, 'AnalyzeResponse'],
  [ZReport, 'Report'],
  [ZReportDetail, 'ReportDetail'],
  [ZReportList, 'ReportList'],
  [ZTrace, 'Trace'],
  [ZTraceList, 'TraceList'],
  [ZAuditRecord, 'AuditRecord'],
  [ZAuditList, 'AuditList'],
  [ZAdminAuditRecord, 'AdminAuditRecord'],
  [ZAdminAuditList, 'AdminAuditList'],
  [ZUserList, 'UserList'],
  [ZAdminUserDetail, 'AdminUserDetail'],
  [ZAdminOverview, 'AdminOverview'],
  [ZHaltState, 'HaltState'],
  [ZCriticalAlert, 'CriticalAlert'],
  [ZCriticalAlertList, 'CriticalAlertList'],
  [ZLiveStatus, 'LiveStatus'],
  [ZLiveReadiness, 'LiveReadiness'],
  [ZBotStatus, 'BotStatus'],
  [ZBotTrade, 'BotTrade'],
  [ZBotTradeList, 'BotTradeList'],
  [ZApiKey, 'ApiKey'],
  [ZApiKeyCreated, 'ApiKeyCreated'],
  [ZApiKeyList, 'ApiKeyList'],
  [ZSignalWebhook, 'SignalWebhook'],
  [ZSignalWebhookCreated, 'SignalWebhookCreated'],
  [ZSignalWebhookList, 'SignalWebhookList'],
  [ZWebhookSignal, 'WebhookSignal'],
  [ZWebhookSignalList, 'WebhookSignalList'],
  [ZBotRun, 'BotRun'],
  [ZBotRunList, 'BotRunList'],
  [ZBotDrift, 'BotDrift'],
  [ZBotDriftRow, 'BotDriftRow'],
  [ZNotificationChannel, 'NotificationChannel'],
  [ZNotificationChannelCreated, 'NotificationChannelCreated'],
  [ZNotificationChannelList, 'NotificationChannelList'],
  [ZNotificationTestResult, 'NotificationTestResult'],
];

/** Gives each shared shape its component name, once (the registry refuses a name given twice). */
export const nameSchemas = (): void => {
  for (const [schema, id] of NAMES) if (!z.globalRegistry.has(schema)) z.globalRegistry.add(schema, { id });
};
