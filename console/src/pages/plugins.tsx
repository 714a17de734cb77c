/**
 * The plugin catalog: every installed plugin with its version, what its tasks do beyond computing
 * their output (its effects), and, on a plugin's page, its settings, the parameters its tasks take
 * and what they return, read from its schemas. Installing and uninstalling are for the `plugins`
 * role and admins, as the API allows.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { collect, Loading, messagesOf, Problems, useLoad } from '../components/common.js';
import { ConfirmAction } from '../components/confirm-action.js';
import { EffectBadge, effectWords } from '../components/effects.js';
import { saysNothing, schemaRows } from '../plugin-schema.js';
import { Link, navigate } from '../router.js';

type PluginDetail = components['schemas']['PluginDetail'];

export function PluginsPage({ client }: { client: TrellisClient }) {
  const plugins = useLoad(
    () => collect(client.all('/plugins', { params: { query: { pageSize: 1000 } } })),
    [],
  );
  const [type, setType] = useState('');
  const [version, setVersion] = useState('latest');
  const [done, setDone] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);

  const install = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    setProblems([]);
    if (type.trim() === '') return setProblems(['Enter the plugin type, such as Security/Hash.']);
    try {
      const { messages } = await client.envelope.POST('/plugins', {
        body: { Type: type.trim(), Version: version.trim() || 'latest' },
      });
      setDone(messages.join(' '));
      setType('');
      plugins.reload();
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };

  return (
    <main id="main">
      <h1>Plugins</h1>
      <p class="lead">
        What tasks can do: each installed plugin, its version and its effects. A plugin's page lists
        its settings, the parameters its tasks take and what they return.
      </p>
      <p class="status-line" role="status">
        {done}
      </p>
      <Problems messages={problems} />
      <Loading loaded={plugins}>
        {(listed) =>
          listed.length === 0 ? (
            <p class="muted">No plugin is installed.</p>
          ) : (
            <div class="table-scroll">
              <table class="plugins">
                <caption class="visually-hidden">Installed plugins</caption>
                <thead>
                  <tr>
                    <th scope="col">Plugin</th>
                    <th scope="col">Version</th>
                    <th scope="col">Effects</th>
                    <th scope="col">What it does</th>
                  </tr>
                </thead>
                <tbody>
                  {listed.map((plugin) => (
                    <tr key={plugin.id} data-plugin={plugin.type}>
                      <td class="nowrap">
                        <Link to={`/plugins/${plugin.id}`}>{plugin.type}</Link>
                      </td>
                      <td>{plugin.version}</td>
                      <td>
                        <EffectBadge effects={plugin.effects} />
                      </td>
                      <td class="wrap description">{firstSentence(plugin.description)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
      <section aria-labelledby="install-title">
        <h2 id="install-title">Install a plugin</h2>
        <form class="inline-form" onSubmit={(event) => void install(event)}>
          <div class="field narrow">
            <label for="install-type">Type</label>
            <input
              id="install-type"
              value={type}
              autocomplete="off"
              placeholder="Group/Name"
              onInput={(event) => setType(event.currentTarget.value)}
            />
            <p class="hint">A plugin of the catalog, such as Security/Hash.</p>
          </div>
          <div class="field narrow">
            <label for="install-version">Version</label>
            <input
              id="install-version"
              value={version}
              autocomplete="off"
              onInput={(event) => setVersion(event.currentTarget.value)}
            />
            <p class="hint">A version (semver) from the catalog, or latest.</p>
          </div>
          <button type="submit" class="primary">
            Install
          </button>
        </form>
      </section>
    </main>
  );
}

/** A description's first sentence, for the list (the plugin's page has it whole). */
const firstSentence = (text: string) => /^.*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;

export function PluginPage({ client, pluginId }: { client: TrellisClient; pluginId: string }) {
  const plugin = useLoad(
    () =>
      client.GET('/plugins/{pluginIdOrType}', {
        params: { path: { pluginIdOrType: pluginId } },
      }) as Promise<PluginDetail>,
    [pluginId],
  );
  const [asking, setAsking] = useState(false);
  const [problems, setProblems] = useState<string[]>([]);

  const uninstall = async ({ type, version }: PluginDetail) => {
    setProblems([]);
    setAsking(false);
    try {
      await client.DELETE('/plugins', { body: { Type: type, Version: version } });
      navigate('/plugins');
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };

  return (
    <main id="main">
      <Loading loaded={plugin}>
        {(detail) => (
          <>
            <p class="crumbs">
              <Link to="/plugins">Plugins</Link>
            </p>
            <div class="page-head">
              <h1>
                {detail.type} <span class="muted">{detail.version}</span>
              </h1>
              <div class="actions">
                <ConfirmAction
                  action="Uninstall"
                  name={`${detail.type} ${detail.version}`}
                  asking={asking}
                  onAsk={() => setAsking(true)}
                  onKeep={() => setAsking(false)}
                  onConfirm={() => void uninstall(detail)}
                />
              </div>
            </div>
            <Problems messages={problems} />
            <p class="lead">{detail.description}</p>
            <p>
              Effects: <EffectBadge effects={detail.effects} /> {effectWords[detail.effects]}.
            </p>
            <Settings specifications={detail.specifications} />
            <SchemaTable
              id="parameters"
              title="Parameters"
              schema={detail.parameters}
              empty="The plugin does not say which parameters it takes: any are passed on."
            />
            <SchemaTable
              id="output"
              title="Output"
              schema={detail.output}
              empty="The plugin does not say what it returns."
            />
          </>
        )}
      </Loading>
    </main>
  );
}

function Settings({ specifications }: { specifications: PluginDetail['specifications'] }) {
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      {specifications.length === 0 ? (
        <p class="muted">The plugin takes no settings.</p>
      ) : (
        <div
          class="table-scroll"
          tabIndex={0}
          role="region"
          aria-label="Settings a configuration gives"
        >
          <table class="schema">
            <caption class="visually-hidden">Settings a configuration gives</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Type</th>
                <th scope="col">Required</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {specifications.map((setting) => (
                <tr key={setting.key} data-setting={setting.key}>
                  <td>
                    <code>{setting.key}</code>
                    {setting.secret && <span class="badge secret">secret</span>}
                  </td>
                  <td>{setting.type}</td>
                  <td>{setting.required ? 'Yes' : 'No'}</td>
                  <td class="wrap">
                    {setting.description}
                    {setting.default !== undefined && (
                      <span class="muted"> Default {JSON.stringify(setting.default)}.</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface SchemaTableProps {
  id: string;
  title: string;
  schema: Record<string, unknown>;
  empty: string;
}

function SchemaTable({ id, title, schema, empty }: SchemaTableProps) {
  const rows = schemaRows(schema);
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {saysNothing(schema) ? (
        <p class="muted">{empty}</p>
      ) : rows.length === 0 ? (
        <pre class="schema-json">{JSON.stringify(schema, null, 2)}</pre>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table class="schema" id={id}>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Required</th>
                <th scope="col">Description</th>
                <th scope="col">Default</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.name} data-name={row.name}>
                  <td>
                    <code>{row.name}</code>
                  </td>
                  <td class="wrap">{row.type}</td>
                  <td>{row.required ? 'Yes' : 'No'}</td>
                  <td class="wrap">{row.description}</td>
                  <td>{row.default === null ? '—' : <code>{row.default}</code>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
