// The theme as a static stylesheet. MantineProvider would write these variables (and its
// hiddenFrom/visibleFrom classes) into <style> elements at run time, which the console's CSP
// (style-src 'self') refuses; the provider runs with both turned off and this text, generated
// from the same theme, is served as a file instead (theme.generated.css). A unit test fails when
// the committed file differs from what the theme generates (scripts/console-theme-css.ts writes it).
import { DEFAULT_THEME, defaultCssVariablesResolver, em, keys, mergeMantineTheme, px, type ConvertCSSVariablesInput } from '@mantine/core';
import { consoleCssVariables, consoleTheme } from './theme.ts';

export const GENERATED_CSS_HEADER =
  '/* Generated from client/console/src/theme/theme.ts by `node scripts/console-theme-css.ts`: do not edit by hand. */';

const block = (selector: string, variables: Record<string, string>): string =>
  `${selector} {\n${Object.entries(variables)
    .map(([name, value]) => `  ${name}: ${value};`)
    .join('\n')}\n}\n`;

/** Mantine's variables for the console's theme, with the console's own resolver over them. */
const themeVariables = (): ConvertCSSVariablesInput => {
  const theme = mergeMantineTheme(DEFAULT_THEME, consoleTheme);
  const base = defaultCssVariablesResolver(theme);
  const own = consoleCssVariables(theme);
  return {
    variables: { ...base.variables, ...own.variables },
    light: { '--mantine-color-scheme': 'light', ...base.light, ...own.light },
    dark: { '--mantine-color-scheme': 'dark', ...base.dark, ...own.dark },
  };
};

/** What MantineClasses writes: hiddenFrom/visibleFrom by the theme's breakpoints (em, as the theme's are). */
const breakpointClasses = (): string => {
  const { breakpoints } = mergeMantineTheme(DEFAULT_THEME, consoleTheme);
  return keys(breakpoints)
    .map((name) => {
      const width = px(breakpoints[name]);
      const below = typeof width === 'number' ? em(width - 0.1) : breakpoints[name];
      return `@media (max-width: ${below}) {\n  .mantine-visible-from-${name} { display: none !important; }\n}\n@media (min-width: ${breakpoints[name]}) {\n  .mantine-hidden-from-${name} { display: none !important; }\n}\n`;
    })
    .join('');
};

export const themeCss = (): string => {
  const { variables, light, dark } = themeVariables();
  return [
    GENERATED_CSS_HEADER,
    block(':root', variables),
    block(":root[data-mantine-color-scheme='light']", light),
    block(":root[data-mantine-color-scheme='dark']", dark),
    breakpointClasses(),
  ].join('\n');
};
