/**
 * The form a run starts from, generated from the definition's declared `inputs`: a labelled field
 * per input (its type, whether it is required, its description), checked before sending, and the
 * server's 400 messages shown beside the fields they name.
 */
import { TrellisApiError } from '@trellis/sdk';
import { useMemo, useState } from 'preact/hooks';
import type { InputDeclaration } from '../definition.js';
import {
  initialText,
  inputFields,
  readInputs,
  splitServerMessages,
  type InputField,
} from '../inputs.js';
import { messagesOf, Problems } from './common.js';

export interface InputsFormProps {
  declarations: Record<string, InputDeclaration>;
  submitLabel: string;
  /** Starts the run; a rejection with a `TrellisApiError` is shown on the form. */
  onSubmit: (inputs: Record<string, unknown>) => Promise<void>;
}

/**
 * The state of a form generated from declared inputs: its fields and texts, the problems found
 * before sending (by field) and after (the server's 400, by field where it names one).
 */
export function useInputsForm(declarations: Record<string, InputDeclaration>, idPrefix = 'input') {
  const fieldId = (name: string) => `${idPrefix}-${name.replace(/[^\w-]/g, '_')}`;
  const fields = useMemo(() => inputFields(declarations), [declarations]);
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((field) => [field.name, initialText(field)])),
  );
  const [fieldProblems, setFieldProblems] = useState<Record<string, string>>({});
  return {
    fields,
    /** The values, or null when a field cannot be read (its problem shown, the field focused). */
    read(): Record<string, unknown> | null {
      const { inputs, problems } = readInputs(fields, texts);
      setFieldProblems(problems);
      const first = Object.keys(problems)[0];
      if (first === undefined) return inputs;
      document.getElementById(fieldId(first))?.focus();
      return null;
    },
    /** Shows a failed call's messages beside their fields; returns the rest. */
    failed(error: unknown): string[] {
      const messages = messagesOf(error);
      if (!(error instanceof TrellisApiError) || error.status !== 400) return messages;
      const { byInput, others } = splitServerMessages(
        messages,
        fields.map((field) => field.name),
      );
      setFieldProblems(byInput);
      return others;
    },
    /** The fields, to render inside a form. */
    rendered: fields.map((field) => (
      <Field
        key={field.name}
        id={fieldId(field.name)}
        field={field}
        text={texts[field.name] ?? ''}
        problem={fieldProblems[field.name]}
        onText={(text) => setTexts((before) => ({ ...before, [field.name]: text }))}
      />
    )),
  };
}

export function InputsForm({ declarations, submitLabel, onSubmit }: InputsFormProps) {
  const form = useInputsForm(declarations);
  const [formProblems, setFormProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setFormProblems([]);
    const inputs = form.read();
    if (inputs === null) return;
    setBusy(true);
    try {
      await onSubmit(inputs);
    } catch (error) {
      setFormProblems(form.failed(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="inputs-form" onSubmit={(event) => void submit(event)} noValidate>
      {form.fields.length === 0 && <p class="muted">This workflow declares no inputs.</p>}
      {form.rendered}
      <Problems messages={formProblems} title="The run was not started:" />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Starting…' : submitLabel}
      </button>
    </form>
  );
}

interface FieldProps {
  id: string;
  field: InputField;
  text: string;
  problem: string | undefined;
  onText: (text: string) => void;
}

function Field({ id, field, text, problem, onText }: FieldProps) {
  const hint = [
    field.description,
    'default' in field && field.default !== undefined
      ? `Default: ${JSON.stringify(field.default)}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  const described = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : '']
    .filter(Boolean)
    .join(' ');
  const common = {
    id,
    name: field.name,
    'aria-invalid': problem ? true : undefined,
    'aria-describedby': described || undefined,
    'aria-required': field.required && !('default' in field) ? true : undefined,
  };
  const input = (event: Event) => onText((event.currentTarget as HTMLInputElement).value);
  return (
    <div class={`field${problem ? ' invalid' : ''}`}>
      <label for={id}>
        {field.name}{' '}
        <span class="field-type">
          ({field.type}
          {field.required ? ', required' : ''})
        </span>
      </label>
      {field.control === 'boolean' ? (
        <select {...common} value={text} onChange={input}>
          {!field.required || 'default' in field ? (
            <option value="">(not given)</option>
          ) : (
            <option value="">Choose…</option>
          )}
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : field.control === 'json' ? (
        <textarea {...common} rows={4} spellcheck={false} value={text} onInput={input} />
      ) : (
        <input
          {...common}
          type="text"
          inputMode={field.control === 'number' ? 'decimal' : undefined}
          value={text}
          onInput={input}
        />
      )}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {problem && (
        <p class="field-problem" id={`${id}-problem`}>
          {field.name} {problem}
        </p>
      )}
    </div>
  );
}
