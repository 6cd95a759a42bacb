// The light/dark switch in the header and on the sign-in pages. Mantine's manager keeps the choice
// in localStorage (theme/color-scheme.ts), so the next load opens in it.
import { ActionIcon, useComputedColorScheme, useMantineColorScheme } from '@mantine/core';

const SunIcon = () => (
  <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" aria-hidden="true" focusable="false">
    <circle cx="12" cy="12" r="4" />
    <path d="M12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4" />
  </svg>
);

const MoonIcon = () => (
  <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
    <path d="M21 12.8A9 9 0 1 1 11.2 3a7 7 0 0 0 9.8 9.8z" />
  </svg>
);

export const ColorSchemeToggle = () => {
  const { setColorScheme } = useMantineColorScheme();
  // What the page shows now ('auto' resolved by the system's preference).
  const shown = useComputedColorScheme('light');
  const next = shown === 'dark' ? 'light' : 'dark';
  return (
    <ActionIcon variant="default" size="md" onClick={() => setColorScheme(next)} aria-label={`Switch to ${next} theme`} title={`Switch to ${next} theme`} data-testid="color-scheme-toggle">
      {shown === 'dark' ? <SunIcon /> : <MoonIcon />}
    </ActionIcon>
  );
};
