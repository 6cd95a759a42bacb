// The asset-class picker every trading view starts with, and the badge that says an account's mode.
import { Badge, NativeSelect } from '@mantine/core';
import type { TAssetClass } from '@trading-service/client';
import { ASSET_CLASS_NAMES, ASSET_CLASSES } from './format.ts';

const ASSET_CLASS_OPTIONS = ASSET_CLASSES.map((assetClass) => ({ value: assetClass, label: ASSET_CLASS_NAMES[assetClass] }));

export const AssetClassPicker = ({ value, onChange, id = 'asset-class' }: { value: TAssetClass; onChange: (next: TAssetClass) => void; id?: string }) => (
  <NativeSelect
    id={id}
    name="asset_class"
    label="Asset class"
    value={value}
    data={ASSET_CLASS_OPTIONS}
    onChange={(event) => onChange(ASSET_CLASSES.find((assetClass) => assetClass === event.currentTarget.value) ?? value)}
  />
);

/** Paper or live, beside a title: live in red, so it is never taken for paper. */
export const ModeBadge = ({ mode }: { mode: 'paper' | 'live' }) => (
  <Badge variant="light" color={mode === 'live' ? 'red' : 'blue'} size="sm" radius="sm" className="mode-badge" data-testid="mode">
    {mode}
  </Badge>
);

/** Every number on a trading view is paper for now: live promotion is not in the console yet. */
export const PaperBadge = () => <ModeBadge mode="paper" />;
