/**
 * The project's plugin configurations: named settings for a plugin, which tasks name instead of
 * giving the settings themselves. Listed; created and edited with a field for each setting the
 * plugin declares (typed from its specification when the user may read the catalog, else as JSON);
 * deleted after confirming. Secrets are write-only: the API gives them back as `********`, which
 * the form never shows: a stored secret is kept while its field is left empty, replaced when typed.
 */
import { TrellisApiError, type components, type TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { collect, Loading, messagesOf, Problems, useLoad } from '../components/common.js';
import { RowActions } from '../components/confirm-action.js';
import { settingsOf, stored, valuesOf, type Values } from '../configuration-settings.js';
import { formatDateTime } from '../format.js';

type PluginDetail = components['schemas']['PluginDetail'];
type PluginListItem = components['schemas']['PluginListItem'];
type Specification = components['schemas']['PluginSpecification'];
type ConfigurationDetail = components['schemas']['ConfigurationDetail'];

export function ConfigurationsPage({ client }: { client: TrellisClient }) {
  const configurations = useLoad(
    () => collect(client.all('/config', { params: { query: { pageSize: 1000 } } })),
    [],
  );
  // The catalog types the form; a user without the plugins role edits the settings as JSON.
  const plugins = useLoad(
    () =>
      collect(client.all('/plugins', { params: { query: { pageSize: 1000 } } })).catch(
        (error: unknown) => {
          if (error instanceof TrellisApiError && error.status === 403) return null;
          throw error;
        },
      ),
    [],
  );
  /** The form: closed, a new configuration, or the one being edited. */
  const [form, setForm] = useState<{ editing: ConfigurationDetail | null } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [deleting, setDeleting] = useState<string | null>(null);

  const edit = async (configId: string) => {
    setDone(null);
    setProblems([]);
    try {
      const editing = await client.GET('/config/{configId}', { params: { path: { configId } } });
      setForm({ editing });
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  const remove = async (configId: string) => {
    setDone(null);
    setProblems([]);
    setDeleting(null);
    try {
      const { messages } = await client.envelope.DELETE('/config/{configId}', {
        params: { path: { configId } },
      });
      setDone(messages.join(' '));
      if (form?.editing?.id === configId) setForm(null);
      configurations.reload();
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };

  return (
    <main id="main">
      <div class="page-head">
        <h1>Plugin configurations</h1>
        {form === null && (
          <button
            type="button"
            class="primary"
            onClick={() => {
              setDone(null);
              setForm({ editing: null });
            }}
          >
            New configuration
          </button>
        )}
      </div>
      <p class="lead">
        Named settings for a plugin: a task whose <code>type</code> is a configuration's name runs
        its plugin with them. Secrets are kept encrypted and never shown again.
      </p>
      <p class="status-line" role="status">
        {done}
      </p>
      <Problems messages={problems} />
      {form !== null && plugins.data !== undefined && (
        <ConfigurationForm
          key={form.editing?.id ?? 'new'}
          client={client}
          plugins={plugins.data}
          editing={form.editing}
          onSaved={(message) => {
            setDone(message);
            setForm(null);
            configurations.reload();
          }}
          onCancel={() => setForm(null)}
        />
      )}
      <Loading loaded={configurations}>
        {(listed) =>
          listed.length === 0 ? (
            <p class="muted">No configurations yet.</p>
          ) : (
            <div class="table-scroll">
              <table class="configurations">
                <caption class="visually-hidden">Plugin configurations</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Plugin</th>
                    <th scope="col">Version</th>
                    <th scope="col">Changed</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {listed.map((configuration) => (
                    <tr key={configuration.id} data-configuration={configuration.name}>
                      <td class="wrap">{configuration.name}</td>
                      <td class="nowrap">{configuration.type}</td>
                      <td>{configuration.version}</td>
                      <td class="nowrap">
                        {configuration.modifiedTime
                          ? formatDateTime(configuration.modifiedTime)
                          : 'Never'}
                      </td>
                      <RowActions
                        action="Delete"
                        name={configuration.name}
                        id={configuration.id}
                        asking={deleting}
                        setAsking={setDeleting}
                        onConfirm={() => void remove(configuration.id)}
                      >
                        <button
                          type="button"
                          aria-label={`Edit ${configuration.name}`}
                          onClick={() => void edit(configuration.id)}
                        >
                          Edit
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

interface ConfigurationFormProps {
  client: TrellisClient;
  /** The installed plugins, or null when the user may not read the catalog. */
  plugins: PluginListItem[] | null;
  editing: ConfigurationDetail | null;
  onSaved: (message: string) => void;
  onCancel: () => void;
}

function ConfigurationForm({
  client,
  plugins,
  editing,
  onSaved,
  onCancel,
}: ConfigurationFormProps) {
  const [name, setName] = useState(editing?.name ?? '');
  const [plugin, setPlugin] = useState(
    editing ? `${editing.type}@${editing.version}` : pluginKey(plugins?.[0]),
  );
  const [values, setValues] = useState<Values>(() => valuesOf(editing?.specifications ?? {}));
  const [json, setJson] = useState(JSON.stringify(editing?.specifications ?? {}, null, 2));
  const [problems, setProblems] = useState<string[]>([]);
  const chosen = plugins?.find((each) => pluginKey(each) === plugin);
  const detail = useLoad(
    async () =>
      chosen
        ? ((await client.GET('/plugins/{pluginIdOrType}', {
            params: { path: { pluginIdOrType: chosen.id } },
          })) as PluginDetail)
        : null,
    [chosen?.id],
  );
  const [type = '', version = ''] = plugin.split('@');
  // A secret is stored only while the edited configuration keeps its plugin.
  const keepsPlugin = editing !== null && plugin === `${editing.type}@${editing.version}`;
  const isStored = (key: string) => keepsPlugin && editing.specifications[key] === stored;

  const save = async (event: Event) => {
    event.preventDefault();
    setProblems([]);
    let specifications: Record<string, unknown>;
    try {
      specifications = detail.data
        ? settingsOf(detail.data.specifications, values, isStored)
        : (JSON.parse(json) as Record<string, unknown>);
    } catch (error) {
      return setProblems([(error as Error).message]);
    }
    const body = { name: name.trim(), type, version, specifications };
    try {
      const { messages } = editing
        ? await client.envelope.PUT('/config/{configId}', {
            params: { path: { configId: editing.id } },
            body,
          })
        : await client.envelope.POST('/config', { body });
      onSaved(messages.join(' '));
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  const set = (key: string, value: string) => setValues({ ...values, [key]: value });

  return (
    <section class="panel" aria-labelledby="configuration-form-title">
      <h2 id="configuration-form-title">
        {editing ? `Edit ${editing.name}` : 'New configuration'}
      </h2>
      <form onSubmit={(event) => void save(event)}>
        <div class="field narrow">
          <label for="configuration-name">Name</label>
          <input
            id="configuration-name"
            value={name}
            autocomplete="off"
            onInput={(event) => setName(event.currentTarget.value)}
          />
          <p class="hint">Unique in the project; tasks name the configuration by it.</p>
        </div>
        {plugins === null ? (
          <div class="field narrow">
            <label for="configuration-plugin">Plugin</label>
            <input
              id="configuration-plugin"
              value={plugin}
              autocomplete="off"
              onInput={(event) => setPlugin(event.currentTarget.value)}
            />
            <p class="hint">The plugin's type and version: Group/Name@1.0.0.</p>
          </div>
        ) : (
          <div class="field narrow">
            <label for="configuration-plugin">Plugin</label>
            <select
              id="configuration-plugin"
              value={plugin}
              onChange={(event) => setPlugin(event.currentTarget.value)}
            >
              {plugins.map((each) => (
                <option key={each.id} value={pluginKey(each)}>
                  {each.type} {each.version}
                </option>
              ))}
            </select>
          </div>
        )}
        {detail.data ? (
          <fieldset class="settings">
            <legend>Settings</legend>
            {detail.data.specifications.length === 0 && (
              <p class="muted">The plugin takes no settings.</p>
            )}
            {detail.data.specifications.map((setting) => (
              <SettingField
                key={`${plugin}:${setting.key}`}
                setting={setting}
                value={values[setting.key] ?? ''}
                isStored={isStored(setting.key)}
                onChange={(value) => set(setting.key, value)}
              />
            ))}
          </fieldset>
        ) : (
          detail.data === null && (
            <div class="field">
              <label for="configuration-settings">Settings (JSON)</label>
              <textarea
                id="configuration-settings"
                rows={6}
                value={json}
                onInput={(event) => setJson(event.currentTarget.value)}
              />
              <p class="hint">
                A stored secret shows as "{stored}": leave it so to keep it, or write the new value.
              </p>
            </div>
          )
        )}
        <Problems messages={problems} title="The configuration was not saved" />
        <div class="actions">
          <button type="submit" class="primary">
            {editing ? 'Save changes' : 'Create configuration'}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

interface SettingFieldProps {
  setting: Specification;
  value: string;
  isStored: boolean;
  onChange: (value: string) => void;
}

/** One setting's field, typed from the plugin's specification. */
function SettingField({ setting, value, isStored, onChange }: SettingFieldProps) {
  const id = `setting-${setting.key}`;
  const hintId = `${id}-hint`;
  const label = (
    <label for={id}>
      {setting.key}{' '}
      <span class="field-type">
        ({setting.type}
        {setting.secret ? ', secret' : ''}
        {setting.required ? ', required' : ''})
      </span>
    </label>
  );
  const common = {
    id,
    'aria-describedby': hintId,
    onInput: (event: { currentTarget: { value: string } }) => onChange(event.currentTarget.value),
  };
  let control;
  if (setting.type === 'boolean') {
    control = (
      <select {...common} value={value} onChange={common.onInput}>
        <option value="">Not set</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  } else if (setting.type === 'object' || setting.type === 'array') {
    control = <textarea {...common} rows={3} value={value} spellcheck={false} />;
  } else if (setting.secret) {
    control = (
      <input
        {...common}
        type="password"
        autocomplete="new-password"
        value={value}
        placeholder={isStored ? 'Stored (not shown)' : ''}
      />
    );
  } else if (setting.type === 'string') {
    control = <input {...common} type="text" autocomplete="off" value={value} />;
  } else {
    control = (
      <input
        {...common}
        type="number"
        step={setting.type === 'integer' ? 1 : 'any'}
        autocomplete="off"
        value={value}
      />
    );
  }
  return (
    <div class="field" data-setting={setting.key}>
      {label}
      {control}
      <p class="hint" id={hintId}>
        {setting.description}
        {setting.default !== undefined && ` Default ${JSON.stringify(setting.default)}.`}
        {setting.secret &&
          (isStored
            ? ' A value is stored and is never shown: leave the field empty to keep it, or type a new one to replace it.'
            : ' Kept encrypted; never shown again once saved.')}
      </p>
    </div>
  );
}

const pluginKey = (plugin: PluginListItem | undefined) =>
  plugin ? `${plugin.type}@${plugin.version}` : '';
