// The asset-class picker every trading view starts with.
import type { TAssetClass } from '@trading-service/client';
import { ASSET_CLASS_NAMES, ASSET_CLASSES } from './format.ts';

export const AssetClassPicker = ({ value, onChange, id = 'asset-class' }: { value: TAssetClass; onChange: (next: TAssetClass) => void; id?: string }) => (
  <label>
    Asset class{' '}
    <select id={id} name="asset_class" value={value} onChange={(event) => onChange(event.target.value as TAssetClass)}>
      {ASSET_CLASSES.map((assetClass) => (
        <option key={assetClass} value={assetClass}>
          {ASSET_CLASS_NAMES[assetClass]}
        </option>
      ))}
    </select>
  </label>
);

/** Every number on a trading view is paper for now: live promotion is not in the console yet. */
export const PaperBadge = () => (
  <span className="badge paper" data-testid="mode">
    paper
  </span>
);
