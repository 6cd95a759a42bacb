// A small history router for the console's handful of pages under /app/.
import { useSyncExternalStore } from 'react';

export const BASE = '/app';
const NAVIGATED = 'console:navigated';

const subscribe = (listener: () => void) => {
  window.addEventListener('popstate', listener);
  window.addEventListener(NAVIGATED, listener);
  return () => {
    window.removeEventListener('popstate', listener);
    window.removeEventListener(NAVIGATED, listener);
  };
};

/** The path inside the console, e.g. `/orders` (`/` for the overview). */
const currentPath = () => {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path.replace(/\/+$/, '') || '/';
};

export const usePath = (): string => useSyncExternalStore(subscribe, currentPath);

export const navigate = (path: string, { replace = false } = {}): void => {
  const url = `${BASE}${path === '/' ? '/' : path}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAVIGATED));
};
