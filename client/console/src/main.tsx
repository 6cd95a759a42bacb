// Entry point of the web console (built by `npm run build`, served under /app/).
import { MantineProvider } from '@mantine/core';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { queryClient } from './api.ts';
import { App } from './app.tsx';
import { applyColorScheme, colorSchemeManager, initialColorScheme } from './theme/color-scheme.ts';
import { consoleTheme } from './theme/theme.ts';
import './theme/stylesheets.css';

// Before the first render, so the first paint is already in the trader's scheme.
applyColorScheme(initialColorScheme());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    {/* The theme's variables and global classes come from theme.generated.css: written at run
        time they would be <style> elements, which the CSP (style-src 'self') refuses. */}
    <MantineProvider theme={consoleTheme} colorSchemeManager={colorSchemeManager} defaultColorScheme="auto" withCssVariables={false} withGlobalClasses={false}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
