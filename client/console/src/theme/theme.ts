// The console's design system: one Mantine theme for every page, light and dark. Dense (small
// controls, tabular figures), blue as the one accent, and colours chosen so every text passes
// WCAG AA's 4.5:1 in both schemes (Mantine's defaults put some text at 3.3:1: dimmed text, the
// light error red, a light badge's text in some colours).
import { createTheme, darken, DEFAULT_THEME, type CSSVariablesResolver, type MantineColor } from '@mantine/core';

export const consoleTheme = createTheme({
  primaryColor: 'blue',
  // Shade 8 under white text is 5.0:1; Mantine's default 6 is 3.6:1.
  primaryShade: { light: 8, dark: 8 },
  fontFamily: 'Inter, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, "SF Mono", Menlo, Consolas, monospace',
  defaultRadius: 'sm',
  headings: {
    fontWeight: '600',
    sizes: {
      h1: { fontSize: '1.375rem', lineHeight: '1.3' },
      h2: { fontSize: '1rem', lineHeight: '1.35' },
      h3: { fontSize: '0.875rem', lineHeight: '1.4' },
      h4: { fontSize: '0.9375rem', lineHeight: '1.4' },
    },
  },
  components: {
    Button: { defaultProps: { size: 'xs' } },
    TextInput: { defaultProps: { size: 'xs' } },
    NativeSelect: { defaultProps: { size: 'xs' } },
    Checkbox: { defaultProps: { size: 'xs' } },
    Table: { defaultProps: { fz: 'sm', verticalSpacing: 6, horizontalSpacing: 'xs' } },
    NavLink: { defaultProps: { py: 6 } },
  },
});

/** Colours whose light badges and alerts the console shows: their text darkened to pass AA on their pale ground. */
const LIGHT_VARIANT_COLORS: readonly MantineColor[] = ['blue', 'red', 'green', 'teal', 'yellow', 'orange', 'grape', 'violet', 'cyan', 'gray'];

const lightVariantTexts = (): Record<string, string> =>
  Object.fromEntries(
    LIGHT_VARIANT_COLORS.flatMap((color) => {
      const darkest = DEFAULT_THEME.colors[color]?.[9];
      return darkest ? [[`--mantine-color-${color}-light-color`, darken(darkest, 0.3)]] : [];
    }),
  );

/** The theme's CSS variables beyond Mantine's: text contrast fixes and the console's own (gain, loss, surfaces). */
export const consoleCssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    ...lightVariantTexts(),
    '--console-color-gain': '#1d7a35',
    '--console-color-loss': '#b3261e',
    '--console-color-warning': '#805600',
    '--console-color-surface': 'var(--mantine-color-white)',
    '--console-color-app': 'var(--mantine-color-gray-0)',
    '--console-color-border': 'var(--mantine-color-gray-3)',
    '--console-color-row-alt': 'var(--mantine-color-gray-0)',
  },
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-error': 'var(--mantine-color-red-4)',
    '--console-color-gain': 'var(--mantine-color-teal-4)',
    '--console-color-loss': 'var(--mantine-color-red-4)',
    '--console-color-warning': 'var(--mantine-color-yellow-4)',
    '--console-color-surface': 'var(--mantine-color-dark-7)',
    '--console-color-app': 'var(--mantine-color-dark-8)',
    '--console-color-border': 'var(--mantine-color-dark-4)',
    '--console-color-row-alt': 'var(--mantine-color-dark-6)',
  },
});
