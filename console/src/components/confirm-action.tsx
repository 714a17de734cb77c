/**
 * A row's action that cannot be undone, asked twice: its button first, then "Yes, <action>
 * <name>" beside "Keep". `children` are the row's other actions, shown while not asking.
 */
import type { ComponentChildren } from 'preact';

interface ConfirmActionProps {
  /** The action as its button says it, e.g. `Revoke`. */
  action: string;
  /** What it acts on, as the row names it. */
  name: string;
  asking: boolean;
  onAsk: () => void;
  onKeep: () => void;
  onConfirm: () => void;
  children?: ComponentChildren;
}

export function ConfirmAction(props: ConfirmActionProps) {
  const { action, name } = props;
  if (props.asking) {
    return (
      <>
        <button type="button" class="danger" onClick={props.onConfirm}>
          Yes, {action.toLowerCase()} {name}
        </button>
        <button type="button" onClick={props.onKeep}>
          Keep
        </button>
      </>
    );
  }
  return (
    <>
      {props.children}
      <button type="button" aria-label={`${action} ${name}`} onClick={props.onAsk}>
        {action}
      </button>
    </>
  );
}
