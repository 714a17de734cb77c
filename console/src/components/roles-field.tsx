/** The roles a member or an API key holds in a project, as checkboxes. */
import type { components } from '@trellis/sdk';

export type Role = components['schemas']['Role'];

export const everyRole: readonly Role[] = ['admin', 'config', 'plugins', 'workflow'];

const meaning: Record<Role, string> = {
  admin: 'everything, and the project’s members and keys',
  config: 'plugin configurations',
  plugins: 'plugin packages',
  workflow: 'workflows, runs and approvals',
};

interface RolesFieldProps {
  /** Tells this field's checkboxes apart from another form's. */
  id: string;
  legend: string;
  roles: readonly Role[];
  onChange: (roles: Role[]) => void;
}

export function RolesField({ id, legend, roles, onChange }: RolesFieldProps) {
  return (
    <fieldset class="choice">
      <legend>{legend}</legend>
      {everyRole.map((role) => (
        <label key={role} for={`${id}-${role}`}>
          <input
            id={`${id}-${role}`}
            type="checkbox"
            checked={roles.includes(role)}
            onChange={(event) =>
              onChange(
                everyRole.filter((each) =>
                  each === role ? event.currentTarget.checked : roles.includes(each),
                ),
              )
            }
          />
          <span>
            <strong>{role}</strong> <span class="muted">({meaning[role]})</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
