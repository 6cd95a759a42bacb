// The /ws/live channel (ticks, signals, trades, bot status) shared by every view that listens:
// one socket per tab while any view needs it (the interface recommends one per user), closed
// when the last one leaves. Reconnects back off by themselves (client/channels.ts).
import { useEffect, useRef, useState } from 'react';
import type { TChannelState, TLiveFrame } from '@trading-service/client';
import { tradingClient } from './api.ts';

type TFrameListener = (frame: TLiveFrame) => void;
type TStateListener = (state: TChannelState) => void;

const frameListeners = new Set<TFrameListener>();
const stateListeners = new Set<TStateListener>();
let channel: ReturnType<typeof tradingClient.channels.live> | undefined;
let current: TChannelState = 'closed';

const open = () =>
  tradingClient.channels.live({
    onFrame: (frame) => {
      for (const listener of frameListeners) listener(frame);
    },
    onState: (state) => {
      current = state;
      for (const listener of stateListeners) listener(state);
    },
  });

const subscribe = (onFrame: TFrameListener, onState: TStateListener): (() => void) => {
  frameListeners.add(onFrame);
  stateListeners.add(onState);
  channel ??= open();
  onState(current);
  return () => {
    frameListeners.delete(onFrame);
    stateListeners.delete(onState);
    if (frameListeners.size === 0) {
      channel?.close();
      channel = undefined;
      current = 'closed';
    }
  };
};

/**
 * Calls `onFrame` with every /ws/live frame while the view is mounted; the socket's state for
 * display. The latest `onFrame` is used, so callers need not memoise it.
 */
export const useLiveFrames = (onFrame: TFrameListener): TChannelState => {
  const [state, setState] = useState<TChannelState>(current);
  const latest = useRef(onFrame);
  latest.current = onFrame;
  useEffect(() => subscribe((frame) => latest.current(frame), setState), []);
  return state;
};

export const LIVE_STATE_TEXT: Record<TChannelState, string> = { connecting: 'connecting', open: 'live', waiting: 'reconnecting', closed: 'closed' };

/** The /ws/live socket's state for display, without opening it ('closed' while no view listens). */
export const useLiveChannelState = (): TChannelState => {
  const [state, setState] = useState<TChannelState>(current);
  useEffect(() => {
    stateListeners.add(setState);
    setState(current);
    return () => void stateListeners.delete(setState);
  }, []);
  return state;
};
