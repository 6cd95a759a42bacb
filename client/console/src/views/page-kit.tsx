// The parts the account, operator and research pages are built from, on Mantine: a page's title
// row, a panel, a table that scrolls inside its own box, labelled fields whose error carries the
// `field-error-<name>` test id the forms have always had, and the paper/live badge. Forms stay
// uncontrolled (they read FormData on submit), so the fields are plain Mantine inputs with names.
import { Badge, Code, NativeSelect, Paper, Stack, Switch, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { Fragment, type HTMLInputTypeAttribute, type ReactNode } from 'react';
import type { TAssetClass } from '@trading-service/client';
import type { TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES } from '../format.ts';
import './pages.css';

/** A page: its one h1 (the navigation's title), what sits beside it, then its sections. */
export const Page = ({ title, aside, children }: { title: string; aside?: ReactNode; children: ReactNode }) => (
  <section className="pages-page">
    <div className="pages-head">
      <Title order={1}>{title}</Title>
      {aside}
    </div>
    {children}
  </section>
);

interface PanelProps {
  title: ReactNode;
  /** h2 for a page's panel, h3 or h4 for one inside a section that has its heading. */
  order?: 2 | 3 | 4;
  testId?: string;
  /** Takes a whole row of a `.pages-grid`. */
  wide?: boolean;
  /** Beside the title: a badge, a state. */
  aside?: ReactNode;
  children?: ReactNode;
}

/**
 * A panel is a `.card` too: the operator page's layout test measures its cards by that class.
 * An <article>, as the pages' cards have been.
 */
export const Panel = ({ title, order = 2, testId, wide, aside, children }: PanelProps) => (
  <Paper component="article" className={`card pages-panel${wide ? ' pages-wide' : ''}`} data-testid={testId}>
    <div className="pages-panel-head">
      {/* An h4 as small as an h3: the theme sizes headings to h3 only. */}
      <Title order={order} size={order === 4 ? 'h3' : undefined}>
        {title}
      </Title>
      {aside}
    </div>
    {children}
  </Paper>
);

/**
 * A table in its own scroll box: wider than a phone it scrolls sideways there, and the box takes
 * the keyboard's focus so the columns out of view can be reached without a pointer.
 */
export const DataTable = ({ label, testId, children }: { label: string; testId?: string; children: ReactNode }) => (
  // A scrollable region must be focusable (WCAG 2.1.1); named so a screen reader says which table.
  <div className="pages-table-scroll" tabIndex={0} role="region" aria-label={label}>
    <Table striped highlightOnHover horizontalSpacing="xs" data-testid={testId}>
      {children}
    </Table>
  </div>
);

/** A table's head: its columns' names, then a last column of row actions named for screen readers only. */
export const ColumnHeads = ({ columns }: { columns: readonly string[] }) => (
  <Table.Thead>
    <Table.Tr>
      {columns.map((column) => (
        <Table.Th key={column}>{column}</Table.Th>
      ))}
      <Table.Th>
        <VisuallyHidden>Actions</VisuallyHidden>
      </Table.Th>
    </Table.Tr>
  </Table.Thead>
);

/** A secret the service answers once (an API key, a signing secret): copy it now, it is not shown again. */
export const ShownOnce = ({ testId, what, note, value }: { testId: string; what: string; note?: string; value: string }) => (
  <Stack gap={4} data-testid={testId}>
    <Text size="sm">
      Copy {what} now: it is not shown again.{note ? ` ${note}` : ''}
    </Text>
    <Code block>{value}</Code>
  </Stack>
);

/** A table row's last cell: its action buttons, side by side, kept off the row's figures. */
export const RowActions = ({ children }: { children: ReactNode }) => (
  <Table.Td>
    <div className="pages-row-actions">{children}</div>
  </Table.Td>
);

/** A small dimmed line under a heading or beside a control. */
export const Hint = ({ children, testId }: { children: ReactNode; testId?: string }) => (
  <Text size="xs" c="dimmed" data-testid={testId}>
    {children}
  </Text>
);

/** What a list says when it has nothing to show. */
export const Empty = ({ children, testId }: { children: ReactNode; testId?: string }) => (
  <Text size="sm" c="dimmed" py={4} data-testid={testId}>
    {children}
  </Text>
);

/** A field's error, with the test id the forms' errors have always carried. */
const errorOf = (errors: TFieldErrors, name: string): ReactNode =>
  errors[name] ? <span data-testid={`field-error-${name}`}>{errors[name]}</span> : undefined;

interface FieldProps {
  name: string;
  label: ReactNode;
  errors: TFieldErrors;
  type?: HTMLInputTypeAttribute;
  /** Browsers fill credentials only where asked; everything else is off. */
  autoComplete?: string;
  placeholder?: string;
  inputMode?: 'decimal' | 'numeric' | 'text';
  description?: ReactNode;
  title?: string;
  /** A number input's bounds and step, as the registry gives them. */
  min?: number;
  max?: number;
  step?: number | 'any';
  className?: string;
}

/** A labelled text input, uncontrolled: the form reads it on submit. */
export const Field = ({ name, label, errors, type = 'text', autoComplete = 'off', className, ...rest }: FieldProps) => (
  <TextInput name={name} label={label} type={type} autoComplete={autoComplete} error={errorOf(errors, name)} className={className} {...rest} />
);

export interface TChoice {
  value: string;
  label: string;
}

interface ChoiceFieldProps {
  name: string;
  label: string;
  choices: readonly TChoice[];
  /** Controlled (with onChange) or, without it, the first value shown. */
  value?: string;
  defaultValue?: string;
  onChange?: (value: string) => void;
  id?: string;
}

/** A native <select> in Mantine's frame: labelled, and chosen by Playwright's selectOption like any select. */
export const ChoiceField = ({ name, label, choices, value, defaultValue, onChange, id }: ChoiceFieldProps) => (
  <NativeSelect
    id={id}
    name={name}
    label={label}
    data={choices.map((choice) => ({ value: choice.value, label: choice.label }))}
    {...(value === undefined ? { defaultValue } : { value })}
    onChange={onChange && ((event) => onChange(event.currentTarget.value))}
  />
);

/** The asset-class choice the account and operator pages start with. */
export const AssetClassField = ({ value, onChange, choices = ASSET_CLASSES, id }: { value: TAssetClass; onChange: (next: TAssetClass) => void; choices?: readonly TAssetClass[]; id?: string }) => (
  <ChoiceField
    id={id}
    name="asset_class"
    label="Asset class"
    choices={choices.map((assetClass) => ({ value: assetClass, label: ASSET_CLASS_NAMES[assetClass] }))}
    value={value}
    // Only the listed asset classes are offered, so the value is one of them.
    onChange={(next) => onChange(next as TAssetClass)}
  />
);

/** An on/off choice, read as FormData's 'on' when set. */
export const SwitchField = ({ name, label, defaultChecked, disabled }: { name: string; label: string; defaultChecked?: boolean; disabled?: boolean }) => (
  <Switch name={name} label={label} defaultChecked={defaultChecked} disabled={disabled} size="sm" />
);

/** Paper or live, everywhere an account's or a bot's mode is shown; the word says it without the colour. */
export const ModeBadge = ({ live, testId = 'mode' }: { live: boolean; testId?: string }) => (
  <Badge component="span" variant="light" color={live ? 'red' : 'blue'} size="sm" data-testid={testId}>
    {live ? 'live' : 'paper'}
  </Badge>
);

/** Label and value pairs (a <dl>), values right-aligned. */
export const KeyValues = ({ rows }: { rows: readonly [label: ReactNode, value: ReactNode, testId?: string][] }) => (
  <dl className="pages-kv">
    {rows.map(([label, value, testId], index) => (
      <Fragment key={index}>
        <dt>{label}</dt>
        <dd data-testid={testId}>{value}</dd>
      </Fragment>
    ))}
  </dl>
);

/** A fill's or signal's side, in the gain colour for a buy and the loss colour for a sell; the word says it without them. */
export const SideText = ({ side }: { side: string }) => <span className={side === 'buy' ? 'gain' : side === 'sell' ? 'loss' : undefined}>{side}</span>;
