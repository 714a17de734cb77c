/**
 * A project's members (for its admins): who may work in it with which roles. A member is a user,
 * a single sign-on subject (`<issuer>#<subject>`) or `group:<name>`; add one or change its roles,
 * or remove it after confirming.
 */
import type { TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { collect, Loading, messagesOf, Problems, useLoad } from '../components/common.js';
import { RowActions } from '../components/confirm-action.js';
import { RolesField, type Role } from '../components/roles-field.js';

interface MembersPageProps {
  client: TrellisClient;
  projectId: string;
  projectName: string;
}

export function MembersPage({ client, projectId, projectName }: MembersPageProps) {
  const path = { projectId };
  const members = useLoad(
    () =>
      collect(
        client.all('/projects/{projectId}/members', {
          params: { path, query: { pageSize: 1000 } },
        }),
      ),
    [],
  );
  const [name, setName] = useState('');
  const [roles, setRoles] = useState<Role[]>(['workflow']);
  const [done, setDone] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [removing, setRemoving] = useState<string | null>(null);

  // What the API answers, success or failure, is what the page says.
  const act = async (call: () => Promise<{ messages: string[] }>) => {
    setDone(null);
    setProblems([]);
    try {
      const { messages } = await call();
      setDone(messages.join(' '));
      members.reload();
      return true;
    } catch (error) {
      setProblems(messagesOf(error));
      return false;
    }
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const member = name.trim();
    if (member === '') return setProblems(['Enter the name of the member.']);
    if (roles.length === 0) return setProblems(['Choose at least one role.']);
    const saved = await act(() =>
      client.envelope.PUT('/projects/{projectId}/members/{name}', {
        params: { path: { ...path, name: member } },
        body: { roles },
      }),
    );
    if (saved) setName('');
  };
  const remove = (member: string) =>
    act(() =>
      client.envelope.DELETE('/projects/{projectId}/members/{name}', {
        params: { path: { ...path, name: member } },
      }),
    ).then(() => setRemoving(null));

  return (
    <main id="main">
      <h1>Members of {projectName}</h1>
      <p class="lead">
        Who may work in project {projectName}, with which roles. A member is a user, a single
        sign-on subject as the header names it (<code>&lt;issuer&gt;#&lt;subject&gt;</code>), or{' '}
        <code>group:&lt;name&gt;</code> for everyone in a single sign-on group.
      </p>
      <p class="status-line" role="status">
        {done}
      </p>
      <Problems messages={problems} />
      <section aria-labelledby="member-form-title">
        <h2 id="member-form-title">Add or change a member</h2>
        <form onSubmit={(event) => void save(event)}>
          <div class="field narrow">
            <label for="member-name">Name</label>
            <input
              id="member-name"
              value={name}
              autocomplete="off"
              onInput={(event) => setName(event.currentTarget.value)}
            />
            <p class="hint">A member already listed keeps its name and gets these roles.</p>
          </div>
          <RolesField id="member-role" legend="Roles" roles={roles} onChange={setRoles} />
          <button type="submit" class="primary">
            Save member
          </button>
        </form>
      </section>
      <Loading loaded={members}>
        {(listed) =>
          listed.length === 0 ? (
            <p class="muted">No members yet.</p>
          ) : (
            <div class="table-scroll">
              <table>
                <caption class="visually-hidden">Members of {projectName}</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Roles</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {listed.map((member) => (
                    <tr key={member.name} data-member={member.name}>
                      <td class="wrap">{member.name}</td>
                      <td>{member.roles.join(', ')}</td>
                      <RowActions
                        action="Remove"
                        name={member.name}
                        id={member.name}
                        asking={removing}
                        setAsking={setRemoving}
                        onConfirm={() => void remove(member.name)}
                      >
                        <button
                          type="button"
                          aria-label={`Change roles of ${member.name}`}
                          onClick={() => {
                            setName(member.name);
                            setRoles(member.roles);
                            document.getElementById('member-name')?.focus();
                          }}
                        >
                          Change roles
                        </button>
                      </RowActions>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
    </main>
  );
}
