// Light or dark, as the trader last chose it (localStorage), else as the system prefers. Set on
// <html> by main.tsx before the first render, so no page paints in the other scheme first: the
// console has no inline script to do it earlier (its CSP allows scripts from 'self' only).
import { localStorageColorSchemeManager, type MantineColorScheme } from '@mantine/core';

/** Where the choice is kept; MantineProvider's manager reads and writes the same key. */
export const COLOR_SCHEME_KEY = 'console-color-scheme';

export const colorSchemeManager = localStorageColorSchemeManager({ key: COLOR_SCHEME_KEY });

/** The scheme a page opens in: the stored choice, or the system's for 'auto' and no choice. */
export const initialColorScheme = (): 'light' | 'dark' => {
  const stored: MantineColorScheme = colorSchemeManager.get('auto');
  if (stored !== 'auto') return stored;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
};

/** Mantine's scheme attribute on <html>, which the theme's stylesheet keys its variables on. */
export const applyColorScheme = (scheme: 'light' | 'dark'): void => {
  document.documentElement.setAttribute('data-mantine-color-scheme', scheme);
};
