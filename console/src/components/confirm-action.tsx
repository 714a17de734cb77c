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

interface RowActionsProps {
  /** The action that cannot be undone, as its button says it, e.g. `Delete`. */
  action: string;
  /** What the row is, as it names it. */
  name: string;
  /** The row's id. */
  id: string;
  /** The id of the row whose action is being asked for, if any (one at a time in a table). */
  asking: string | null;
  /** Asks for a row's action (its id), or stops asking (null). */
  setAsking: (id: string | null) => void;
  onConfirm: () => void;
  /** False leaves the cell empty (a key already revoked). */
  available?: boolean;
  /** The row's other actions, shown while not asking. */
  children?: ComponentChildren;
}

/** A table row's actions cell, its action that cannot be undone asked twice ({@link ConfirmAction}). */
export function RowActions(props: RowActionsProps) {
  const { id, setAsking } = props;
  return (
    <td class="row-actions">
      {props.available !== false && (
        <ConfirmAction
          action={props.action}
          name={props.name}
          asking={props.asking === id}
          onAsk={() => setAsking(id)}
          onKeep={() => setAsking(null)}
          onConfirm={props.onConfirm}
        >
          {props.children}
        </ConfirmAction>
      )}
    </td>
  );
}
