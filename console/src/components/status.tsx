import type { ExecutionStatus, TaskStatus } from '../run-state.js';

type Status = TaskStatus | ExecutionStatus;

/** A status in words: `WaitingForApproval` → `Waiting for approval`. */
export function statusLabel(status: Status): string {
  const words = status.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A status as a coloured label (its words say it too, not only the colour). */
export function StatusBadge({ status }: { status: Status | null }) {
  if (status === null) return <span class="badge">…</span>;
  return (
    <span class={`badge status-${status}`} data-status={status}>
      {statusLabel(status)}
    </span>
  );
}
