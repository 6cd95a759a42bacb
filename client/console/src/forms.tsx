// Form plumbing shared by the console's forms: fields read as text, zod issues by field, and
// a labelled input with its error under it.
import { TextInput } from '@mantine/core';
import type { HTMLInputTypeAttribute } from 'react';
import type { z } from 'zod';

/** Field errors of a zod check, by field name. */
export type TFieldErrors = Record<string, string>;

export const fieldErrorsOf = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): TFieldErrors => {
  const errors: TFieldErrors = {};
  for (const issue of issues) {
    const field = String(issue.path[0] ?? 'form');
    errors[field] ??= issue.message;
  }
  return errors;
};

/**
 * A submitted form's values checked with the schema the API checks them with: the field errors
 * shown (none once it passes), and the parsed request, or undefined when it does not pass.
 */
export const checkedRequest = <T,>(schema: z.ZodType<T>, values: unknown, showErrors: (errors: TFieldErrors) => void): T | undefined => {
  const checked = schema.safeParse(values);
  showErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
  return checked.success ? checked.data : undefined;
};

/** A field's error where no input shows it (the field is not on the form now). */
export const FieldError = ({ errors, name }: { errors: TFieldErrors; name: string }) =>
  errors[name] ? (
    <span className="field-error" data-testid={`field-error-${name}`}>
      {errors[name]}
    </span>
  ) : null;

/** A text field of a submitted form ('' when absent; a file input never is one of ours). */
export const fieldText = (form: FormData, name: string): string => {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
};

interface TextFieldProps {
  name: string;
  label: string;
  errors: TFieldErrors;
  type?: HTMLInputTypeAttribute;
  /** Browsers fill credentials only where asked; everything else is off. */
  autoComplete?: string;
  placeholder?: string;
  inputMode?: 'decimal' | 'text';
  /** Told the text as it is typed (the field stays uncontrolled: the form reads it on submit). */
  onChange?: (text: string) => void;
  className?: string;
  /** The id of a <datalist> whose options the browser suggests as the text is typed. */
  list?: string;
}

export const TextField = ({ name, label, errors, type = 'text', autoComplete = 'off', placeholder, inputMode, onChange, className, list }: TextFieldProps) => (
  <TextInput
    name={name}
    list={list}
    label={label}
    type={type}
    autoComplete={autoComplete}
    placeholder={placeholder}
    inputMode={inputMode}
    className={className}
    // Decimal fields read as numbers: right-aligned figures of one width.
    classNames={inputMode === 'decimal' ? { input: 'num-input' } : undefined}
    onChange={onChange && ((event) => onChange(event.target.value))}
    error={errors[name] ? <span data-testid={`field-error-${name}`}>{errors[name]}</span> : undefined}
  />
);
