/**
 * A project's API keys (for its admins): the keys of its service accounts and partners' systems,
 * revoked ones included; create one (its secret is shown once, here, to copy), revoke one after
 * confirming.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { collect, Loading, messagesOf, Problems, useLoad } from '../components/common.js';
import { RowActions } from '../components/confirm-action.js';
import { RolesField, type Role } from '../components/roles-field.js';
import { ShownOnce } from '../components/shown-once.js';
import { formatDateTime } from '../format.js';

type CreatedKey = components['schemas']['ApiKeyCreated'];

interface ApiKeysPageProps {
  client: TrellisClient;
  projectId: string;
  projectName: string;
}

export function ApiKeysPage({ client, projectId, projectName }: ApiKeysPageProps) {
  const path = { projectId };
  const keys = useLoad(
    () =>
      collect(
        client.all('/projects/{projectId}/keys', { params: { path, query: { pageSize: 1000 } } }),
      ),
    [],
  );
  const [name, setName] = useState('');
  const [roles, setRoles] = useState<Role[]>(['workflow']);
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [revoking, setRevoking] = useState<string | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    setProblems([]);
    setCreated(null);
    if (name.trim() === '') return setProblems(['Enter a name for the key.']);
    if (roles.length === 0) return setProblems(['Choose at least one role.']);
    try {
      const made = await client.POST('/projects/{projectId}/keys', {
        params: { path },
        body: {
          name: name.trim(),
          roles,
          ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
        },
      });
      setCreated(made);
      setName('');
      setExpires('');
      keys.reload();
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  const revoke = async (keyId: string) => {
    setDone(null);
    setProblems([]);
    try {
      const { messages } = await client.envelope.DELETE('/projects/{projectId}/keys/{keyId}', {
        params: { path: { ...path, keyId } },
      });
      setDone(messages.join(' '));
      keys.reload();
    } catch (error) {
      setProblems(messagesOf(error));
    }
    setRevoking(null);
  };

  return (
    <main id="main">
      <h1>API keys of {projectName}</h1>
      <p class="lead">
        Keys for service accounts and other systems: each acts in project {projectName} only, with
        its roles, sent as <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
      <p class="status-line" role="status">
        {done}
      </p>
      <Problems messages={problems} />
      {created && <NewKey created={created} />}
      <section aria-labelledby="key-form-title">
        <h2 id="key-form-title">Create a key</h2>
        <form onSubmit={(event) => void create(event)}>
          <div class="field narrow">
            <label for="key-name">Name</label>
            <input
              id="key-name"
              value={name}
              autocomplete="off"
              onInput={(event) => setName(event.currentTarget.value)}
            />
            <p class="hint">Letters, digits, ".", "_" and "-"; what the key is for, such as ci.</p>
          </div>
          <RolesField id="key-role" legend="Roles" roles={roles} onChange={setRoles} />
          <div class="field narrow">
            <label for="key-expires">
              Expires <span class="field-type">(optional)</span>
            </label>
            <input
              id="key-expires"
              type="datetime-local"
              value={expires}
              onInput={(event) => setExpires(event.currentTarget.value)}
            />
            <p class="hint">Left empty, the key works until it is revoked.</p>
          </div>
          <button type="submit" class="primary">
            Create key
          </button>
        </form>
      </section>
      <Loading loaded={keys}>
        {(listed) =>
          listed.length === 0 ? (
            <p class="muted">No keys yet.</p>
          ) : (
            <div class="table-scroll">
              <table>
                <caption class="visually-hidden">API keys of {projectName}</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Roles</th>
                    <th scope="col">Created</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Revoked</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {listed.map((key) => (
                    <tr key={key.id} data-key={key.name} class={key.revokedAt ? 'revoked' : ''}>
                      <td>{key.name}</td>
                      <td>
                        <code>{key.prefix}</code>
                      </td>
                      <td>{key.roles.join(', ')}</td>
                      <td>
                        {formatDateTime(key.createdAt)}
                        <br />
                        <span class="muted">by {key.createdBy}</span>
                      </td>
                      <td>{key.expiresAt ? formatDateTime(key.expiresAt) : 'Never'}</td>
                      <td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</td>
                      <td>{key.revokedAt ? formatDateTime(key.revokedAt) : 'No'}</td>
                      <RowActions
                        action="Revoke"
                        name={key.name}
                        id={key.id}
                        asking={revoking}
                        setAsking={setRevoking}
                        onConfirm={() => void revoke(key.id)}
                        available={!key.revokedAt}
                      />
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

/** A key just created: its secret, to copy now, as no later page shows it. */
function NewKey({ created }: { created: CreatedKey }) {
  return (
    <ShownOnce
      id="new-key-secret"
      title={`Key ${created.name} was created`}
      label={`The key ${created.name}`}
      secret={created.key}
    >
      Copy the key now: it is shown only this once. Trellis keeps only a hash of it, so no page can
      show it again.
    </ShownOnce>
  );
}
