// The name of the Web Lock every tab's refresh runs under (session.ts), the refresh token's read
// and write inside it. Its own module, free of browser types, so the end-to-end specs can hold it.
export const REFRESH_LOCK = 'trading-console.refresh';
