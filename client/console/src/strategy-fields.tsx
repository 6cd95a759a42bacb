// A strategy from the registry (GET /api/strategy/list) and its parameters as form fields with
// the registry's bounds. The parameters are checked against the registry's own JSON schema
// (turned back into zod), so a value the API would refuse with 422 is refused in the page.
import { Fieldset, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import type { TAssetClass, TStrategyList } from '@trading-service/client';
import { trpc } from './api.ts';
import { fieldText, type TFieldErrors } from './forms.tsx';
import { ChoiceField, Field } from './views/page-kit.tsx';

export type TStrategy = TStrategyList['items'][number];

/** What the registry says of one parameter (a JSON schema property). */
interface ParamSchema {
  type?: string;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

const PARAM_PREFIX = 'param.';

export const useStrategies = () => useQuery(trpc.backtest.strategies.queryOptions(undefined, { staleTime: 300_000 }));

/** The strategies that trade an asset class. */
export const strategiesFor = (list: TStrategyList | undefined, assetClass: TAssetClass): TStrategy[] => (list?.items ?? []).filter((strategy) => strategy.asset_classes.includes(assetClass));

const paramsOf = (strategy: TStrategy): [string, ParamSchema][] => Object.entries(strategy.params).map(([name, schema]) => [name, (schema ?? {}) as ParamSchema]);

const boundsText = (schema: ParamSchema): string => {
  const low = schema.minimum !== undefined ? `≥ ${schema.minimum}` : schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '';
  const high = schema.maximum !== undefined ? `≤ ${schema.maximum}` : schema.exclusiveMaximum !== undefined ? `< ${schema.exclusiveMaximum}` : '';
  return [low, high].filter(Boolean).join(', ');
};

export const StrategyPicker = ({ strategies, value, onChange }: { strategies: TStrategy[]; value: string; onChange: (name: string) => void }) => (
  <ChoiceField name="strategy_name" label="Strategy" choices={strategies.map((strategy) => ({ value: strategy.name, label: strategy.name }))} value={value} onChange={onChange} />
);

/**
 * One input per parameter, empty meaning the registry's default (shown as the placeholder). The
 * bounds are part of the label, so a parameter's input is never named just "fast": the sweep form
 * has a grid field of that name beside it.
 */
export const StrategyParamFields = ({ strategy, errors }: { strategy: TStrategy | undefined; errors: TFieldErrors }) => {
  if (!strategy) return null;
  return (
    <Fieldset legend={`Parameters of ${strategy.name}`} variant="filled" key={strategy.name} className="pages-wide">
      <Text size="xs" c="dimmed" mb="xs">
        {strategy.description}
      </Text>
      <div className="pages-fields">
        {paramsOf(strategy).map(([name, schema]) => (
          <Field
            key={name}
            name={`${PARAM_PREFIX}${name}`}
            label={
              <>
                {name}{' '}
                <Text span size="xs" c="dimmed">
                  {boundsText(schema)}
                </Text>
              </>
            }
            title={schema.description}
            type="number"
            step={schema.type === 'integer' ? 1 : 'any'}
            min={schema.minimum}
            max={schema.maximum}
            placeholder={typeof schema.default === 'number' ? String(schema.default) : ''}
            errors={errors}
          />
        ))}
      </div>
    </Fieldset>
  );
};

/** The registry's schema of a strategy's parameters, strict like the API's (an unknown key is refused). */
const paramsSchemaOf = (strategy: TStrategy) =>
  // The registry's `params` are JSON Schema properties (z.toJSONSchema on the server); the wire contract types them loosely.
  z.fromJSONSchema({ type: 'object', properties: strategy.params as Record<string, z.core.JSONSchema.JSONSchema>, additionalProperties: false });

export type TParamsCheck = { ok: true; params: Record<string, number> | undefined } | { ok: false; errors: TFieldErrors };

/** The parameters typed into the form (only those filled in: the rest keep their defaults), checked. */
export const checkedParams = (form: FormData, strategy: TStrategy | undefined): TParamsCheck => {
  if (!strategy) return { ok: true, params: undefined };
  const params: Record<string, number> = {};
  for (const [name] of paramsOf(strategy)) {
    const text = fieldText(form, `${PARAM_PREFIX}${name}`).trim();
    if (text !== '') params[name] = Number(text);
  }
  const checked = paramsSchemaOf(strategy).safeParse(params);
  if (checked.success) return { ok: true, params: Object.keys(params).length > 0 ? params : undefined };
  const errors: TFieldErrors = {};
  for (const issue of checked.error.issues) errors[`${PARAM_PREFIX}${String(issue.path[0] ?? '')}`] ??= issue.message;
  return { ok: false, errors };
};

