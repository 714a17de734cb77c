"""Schemathesis hooks of Trellis's contract run (`schemathesis.toml`, `scripts/contract/contract-fuzz.sh`).

They give the fuzzer what the OpenAPI document cannot: test data that reaches the operations'
success paths, and a server that stays worth testing. None hides a response from a check: they
shape what is sent, in positive cases only (negative ones are left alone), and every response
still goes through every check. Where the document can state a rule (a trigger's properties by
its type, a cron's 5 fields, a duration's form), it does, and the hooks leave it to the document.

Every phase's positive cases are completed, since Schemathesis judges each phase apart (an
operation that rejects most of one phase's valid data is reported as a schema mismatch): the
fuzzing and stateful phases' in `flatmap_case`, with choices drawn; the examples' in
`before_add_examples` and the coverage phase's in `map_case`, with fixed valid choices and the
ids in the path pointed at what the hooks keep (those phases name made-up ids). The rules that
depend on the path are applied again in `before_call`, since in stateful runs links fill the
path after a case was completed.

1. Workflow definitions. A definition is JSON text or the object (a `oneOf` of a string and the
   definition's schema): Schemathesis generates the text as any string, and a definition must
   also be a DAG over installed plugins, which no JSON Schema says. So in every positive case
   whose body carries a definition (found by that `oneOf`, so new operations with one are
   covered, and so are those of an array's objects, an apply's `workflows`, each then named apart),
   the definition is drawn from `definitions()` below: valid,
   random DAGs over the built-in Flow plugins, some declaring optional inputs, a third of them
   starting with an approval that decides itself after a few seconds (so `waitSeconds` never
   waits long).

2. What must agree with the path or with the server's state. A body field named like a path
   parameter (`workflowId`, `triggerId`) must equal it: it is set to it. A run's `inputs` must
   fit the inputs the workflow in the path declares: they are drawn for its declarations (some
   optional ones given, some not), and a `revision` is counted round the revisions it has had.
   The server's refusals of what breaks these rules are tested by the integration tests
   (test/api, test/engine); here they would only keep the fuzzer from the success paths.

3. A run that is there now. Ids of executions, tasks and approvals drawn from earlier responses
   rarely belong together or to a run still waiting (approvals decide themselves within seconds),
   so cancel, approve, reject and a task's reads would hardly ever succeed. In half the positive
   cases of an operation whose path names an execution (but not its event stream, which lasts
   as long as the run), its ids are those of a run that waits for an approval at that moment,
   with that approval and its task: one of the fuzzer's own runs, or one the hooks keep started
   ahead (a workflow of their own each, which waits 10 s at most). In the examples phase, which
   runs once whatever the time, every such operation's case is; a decision on that approval then
   brings no `inputs` (the hooks' approvals declare none).

4. Plugins the definitions use. Fuzzing uninstalls plugins (`DELETE /plugins` with a type and
   version drawn from earlier responses) and is right to: it must succeed. When it uninstalls one
   of the plugins `definitions()` uses, the hook installs it again at once through the API (and
   fails the run if that does not work), so that the rest of the run still adds and runs
   workflows. Other plugins stay uninstalled until the fuzzer installs them again itself.

5. Runs a stateful step started. The next step of a chain follows within milliseconds, before a
   new run has even created its approvals; the hook waits (at most 3 s) until the run has paused
   or ended, so that the links from a run to its approvals lead somewhere.

6. Idempotency keys in stateful runs. Hypothesis replays the first steps of earlier scenarios in
   later ones, so a create is sent again with the same `Idempotency-Key` and body, and gets the
   first answer again, as the contract says it must: the id of what the earlier scenario created
   and perhaps deleted since. The fuzzer would then report that resource as gone missing. In
   the stateful phase each key is made unique to its call; the fuzzing phase and the integration
   tests still send keys again.

7. Triggers that can fire. The document types a trigger's properties by its type, but a valid
   cron (not only 5 fields), the keys being read case-insensitively (so that none can be
   `required`) and a secret going only with a signature are beyond it. So in every positive case
   that creates or updates a `TimeBased` or `Webhook` trigger, its properties are drawn for its
   type: a `TimeBased` trigger fires on 1 January only (so that none fires by itself during the
   run), with valid schedule policies; a `Webhook` trigger mostly checks no signature (a fuzzer
   cannot sign), and one that signs on an update brings a secret. A `Manual` trigger keeps the
   properties generated: it takes any. A backfill's range is drawn around a 1 January, so that
   it holds that trigger's one firing, and a backfill of a TimeBased trigger on another schedule
   (one of the document's examples) goes to one of the hooks' own. In half the positive webhook
   deliveries the body is `{}`, which fits the inputs of the hooks' workflows (optional ones
   only). And as for runs (3.), trigger ids drawn from earlier responses rarely name a trigger an
   operation can succeed on: in half the positive cases of an operation whose path names a
   trigger (and in its one case of the examples phase), it names one of a workflow of the hooks'
   own that fits the operation now (a TimeBased trigger for a preview, an Active one on `YEARLY`
   for a backfill, an Active Webhook trigger without signature for a delivery or the delivery
   log, a signing one for a secret rotation), made when there is none; a delivery log's drawn
   `after` is left out then, since it must name one of that trigger's deliveries. An API key's
   `expiresAt` must be in the future, which a `date-time` cannot say: positive cases give one a
   day ahead.

8. Approval links. A link's token is its credential, made by the server and sent only to the
   notification webhooks, so the fuzzer can never draw one. `scripts/dev/with-trellis.ts` configures
   a webhook of its own and writes every approval link's token to a file
   (`TRELLIS_APPROVAL_LINKS`). In half the positive cases of an operation on a link, the token
   is the newest one not used yet, of an approval still waiting (the hooks start a waiting run
   when there is none), and a decision through it carries no `inputs` (the hooks' approvals
   declare none).

9. The hooks' own workflows stay. `POST /workflows/apply` with `prune` deletes every workflow of
   the project no definition names, and a fuzzer sends `"workflows": []` soon enough: the
   workflows sections 2, 3 and 7 keep would be gone. A positive case that prunes is sent as a dry
   run, which answers the same plan and checks; test/api/apply.test.ts prunes for real.

And a check, `every_operation_succeeds`: the run fails unless every operation answered 2xx at
least once, so that no success path goes untested unnoticed.
"""

from __future__ import annotations

import base64
import calendar
import json
import os
import string
import time
import uuid
from typing import Any

import requests
import schemathesis
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.generation.meta import TestPhase

DEFINITION_SCHEMA = "#/components/schemas/Definition.WorkflowDefinition"
FLOW_PLUGINS = ("Flow/NoOp", "Flow/Log", "Flow/Delay")
# The statuses of a run that has neither paused for an approval nor ended.
SETTLING = ("Pending", "Running")

# ---------------------------------------------------------------------------------------------
# 1. Workflow definitions

# Text PostgreSQL can store (no NUL, no lone surrogate) and no `$`, which would start a `$[...]`
# expression; definitions with expressions are drawn on purpose below.
text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x00$"), min_size=1, max_size=30
)
names = text.filter(lambda name: name.strip() == name)
variable_names = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), text)


@st.composite
def task(draw: st.DrawFn, name: str, earlier: list[str], variables: list[str]) -> dict[str, Any]:
    plugin = draw(st.sampled_from(FLOW_PLUGINS))
    if plugin == "Flow/Log":
        message = draw(text)
        if variables and draw(st.booleans()):
            message += f" $[Variables('{draw(st.sampled_from(variables))}')]"
        parameters: dict[str, Any] = {"message": message}
    elif plugin == "Flow/Delay":
        parameters = {"milliseconds": draw(st.integers(0, 50))}
    else:
        parameters = draw(st.dictionaries(variable_names, scalars, max_size=3))
    definition: dict[str, Any] = {
        "name": name,
        "type": {"plugin": plugin},
        "parameters": parameters,
    }
    if earlier:
        dependencies = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2))
        if dependencies:
            definition["dependencies"] = dependencies
    return definition


def approval(timeout_ms: int, on_timeout: str, comment: str) -> dict[str, Any]:
    return {
        "enabled": True,
        "comment": comment,
        "timeoutMilliseconds": timeout_ms,
        "onTimeout": on_timeout,
    }


INPUT_TYPES = ("string", "number", "integer", "boolean", "object", "array")
input_values: dict[str, Any] = {
    "string": text,
    "number": st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False)),
    "integer": st.integers(-1000, 1000),
    "boolean": st.booleans(),
    "object": st.dictionaries(variable_names, scalars, max_size=3),
    "array": st.lists(scalars, max_size=3),
}


@st.composite
def input_declarations(draw: st.DrawFn) -> dict[str, Any]:
    """An optional input: not required, with a default of its type or none."""
    kind = draw(st.sampled_from(INPUT_TYPES))
    declaration: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        declaration["default"] = draw(input_values[kind])
    return declaration


@st.composite
def definitions(draw: st.DrawFn) -> str:
    """The JSON text of a valid definition: a random DAG of Flow tasks."""
    task_names = draw(st.lists(names, min_size=1, max_size=4, unique_by=str.casefold))
    variables = draw(st.dictionaries(variable_names, scalars, max_size=3))
    tasks = [
        draw(task(name, task_names[:index], list(variables)))
        for index, name in enumerate(task_names)
    ]
    # A third of the workflows wait for a person at once: their first task asks for an approval,
    # which decides itself after a few seconds, so that their runs end (`waitSeconds` returns)
    # but stay paused for a while.
    if draw(st.integers(0, 2)) == 0:
        tasks[0]["manualApproval"] = approval(
            draw(st.integers(1000, 4000)), draw(st.sampled_from(["Approve", "Reject"])), draw(text)
        )
    # A suffix keeps names apart: Hypothesis draws small names first, and a taken name is 409.
    definition: dict[str, Any] = {
        "name": f"{draw(names)} {draw(st.uuids()).hex[:8]}",
        "tasks": tasks,
    }
    if variables:
        definition["variables"] = variables
    # Optional inputs only: a run, a TimeBased trigger's firing or a webhook delivery that gives
    # none still fits, whichever workflow the fuzzer points it at.
    declared = draw(st.dictionaries(variable_names, input_declarations(), max_size=3))
    if declared:
        definition["inputs"] = declared
    if draw(st.booleans()):
        definition["description"] = draw(text)
    return json.dumps(definition, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# 7. Trigger properties that can fire, and a range that holds a firing

# Midnight on 1 January (UTC): in the past for the whole run, so backfills of this year's first
# minute run it once, and the schedule never fires by itself while the run lasts.
YEARLY = "0 0 1 1 *"


@st.composite
def time_based_properties(draw: st.DrawFn) -> dict[str, Any]:
    properties: dict[str, Any] = {"cron": YEARLY}
    if draw(st.booleans()):
        properties["overlap"] = draw(
            st.sampled_from(
                ["Skip", "BufferOne", "BufferAll", "CancelOther", "TerminateOther", "AllowAll"]
            )
        )
    if draw(st.booleans()):
        properties["catchupWindow"] = draw(st.sampled_from(["10s", "5m", "1h30m", "2d"]))
    if draw(st.booleans()):
        properties["jitter"] = draw(st.sampled_from(["0s", "30s", "5m"]))
    return properties


# A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes.
webhook_secrets = st.binary(min_size=24, max_size=64).map(
    lambda key: "whsec_" + base64.b64encode(key).decode()
)


@st.composite
def webhook_properties(draw: st.DrawFn, updating: bool) -> dict[str, Any]:
    """Mostly no signature (a fuzzer cannot sign). A trigger that comes to sign on an update
    needs a secret then (one is generated only on creation), so updates that sign give one."""
    signature = draw(st.sampled_from(["None", "None", "StandardWebhooks"]))
    properties: dict[str, Any] = {"signature": signature}
    if signature == "StandardWebhooks" and (updating or draw(st.booleans())):
        properties["secret"] = draw(webhook_secrets)
    return properties


def first_hour_of_year() -> dict[str, str]:
    year = time.gmtime().tm_year
    return {"from": f"{year}-01-01T00:00:00Z", "to": f"{year}-01-01T01:00:00Z"}


@st.composite
def yearly_windows(draw: st.DrawFn) -> dict[str, str]:
    """A past range that holds exactly one firing of `YEARLY`: around 1 January of this year or
    one of the three before, up to a week on either side (never past now), and at least an hour
    after it, since a firing is delayed by the trigger's jitter (up to 5 minutes here)."""
    year = time.gmtime().tm_year - draw(st.integers(0, 3))
    new_year = calendar.timegm((year, 1, 1, 0, 0, 0))
    start = new_year - draw(st.integers(0, 7 * 86400))
    end = min(new_year + draw(st.integers(3600, 7 * 86400)), int(time.time()))
    return {"from": iso(start), "to": iso(end)}


def iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# ---------------------------------------------------------------------------------------------
# The API itself, for the hooks that act on it (with the run's credentials, which
# schemathesis.toml reads from the same variables).


class Trellis:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.auth = (os.environ["TRELLIS_USER"], os.environ["TRELLIS_PASSWORD"])
        # The workflow whose triggers the hooks use (section 7), made on first use.
        self.triggering: str | None = None
        # The workflow the hooks give updates to in the examples and coverage phases (section 2).
        self.updating: str | None = None
        # Approval link tokens spent or found unusable (section 8).
        self.used_links: set[str] = set()
        # The id of the project the hooks work in (the default one), read before the fuzzer
        # can rename it.
        self.own_project: str = self.data("GET", "/projects/default")["id"]

    def is_own_project(self, project: str) -> bool:
        """Whether a project path (an id or a name) names the hooks' own project."""
        return project in (self.own_project, "default")

    def call(self, method: str, path: str, body: Any = None) -> requests.Response:
        return self.session.request(method, f"{self.base_url}{path}", json=body, timeout=30)

    def data(self, method: str, path: str, body: Any = None) -> Any:
        return self.data_of(self.call(method, path, body))

    @staticmethod
    def data_of(response: requests.Response) -> Any:
        if response.status_code != 200:
            request = response.request
            raise AssertionError(
                f"{request.method} {request.path_url} answered {response.status_code}: {response.text}"
            )
        return response.json()["data"]

    def trigger_for(self, kind: str) -> tuple[str, str]:
        """A trigger of the hooks' workflow that fits `kind` now (the fuzzer changes and deletes
        triggers too), made when there is none; its workflow's id and its id."""
        fits, body = TRIGGER_KINDS[kind]
        workflow = self.triggering_workflow()
        for trigger in self.data("GET", f"/workflows/{workflow}/triggers"):
            if fits(trigger):
                return workflow, trigger["id"]
        created = self.call(
            "POST", f"/workflows/{workflow}/triggers", {**body, "workflowId": workflow}
        )
        if created.status_code == 400:
            # The fuzzer declared inputs on the workflow (an update or an apply that accepted the
            # break) that the trigger does not give: a fresh workflow of the hooks' takes its place.
            workflow = self.triggering = self.add_workflow(TRIGGERING)
            created = self.call(
                "POST", f"/workflows/{workflow}/triggers", {**body, "workflowId": workflow}
            )
        return workflow, self.data_of(created)["triggerId"]

    def triggering_workflow(self) -> str:
        if not self.exists(self.triggering):
            self.triggering = self.add_workflow(TRIGGERING)
        assert self.triggering is not None
        return self.triggering

    def updating_workflow(self) -> str:
        """A workflow of the hooks' own for updates to replace the definition of (not the
        triggering one: its triggers rely on its definition)."""
        if not self.exists(self.updating):
            self.updating = self.add_workflow(TRIGGERING)
        assert self.updating is not None
        return self.updating

    def exists(self, workflow: str | None) -> bool:
        return (
            workflow is not None and self.call("GET", f"/workflows/{workflow}").status_code == 200
        )

    def add_workflow(self, template: dict[str, Any]) -> str:
        definition = {**template, "name": f"{template['name']} {uuid.uuid4().hex[:8]}"}
        return self.data("POST", "/workflows/Add", {"definition": json.dumps(definition)})["id"]

    def workflow(self, workflow: str) -> dict[str, Any] | None:
        """A workflow's detail, with its definition parsed; None when there is none by that id."""
        response = self.call("GET", f"/workflows/{workflow}")
        if response.status_code != 200:
            return None
        detail = self.data_of(response)
        try:
            detail["definition"] = json.loads(detail["workflow"])
        except ValueError:
            detail["definition"] = {}
        return detail

    def trigger(self, workflow: str, trigger: str) -> dict[str, Any] | None:
        response = self.call("GET", f"/workflows/{workflow}/triggers/{trigger}")
        return self.data_of(response) if response.status_code == 200 else None

    def waiting_approvals(self) -> list[dict[str, Any]]:
        """Approvals waiting for a decision now. Runs that wait are started ahead, a few at a
        time, so that there usually are some: a new run takes a moment to ask for its approval."""
        pending = self.pending()
        if len(pending) < 3:
            self.start_waiting_run()
        deadline = time.monotonic() + 15
        while not pending:
            if time.monotonic() > deadline:
                raise AssertionError("No run asked for an approval within 15 s of being started")
            time.sleep(0.1)
            pending = self.pending()
        return pending

    def fresh_link(self, use: bool) -> str:
        """The token of the newest approval link not used yet whose approval still waits; `use`
        marks it used (a decision spends it)."""
        pending = {approval["id"] for approval in self.waiting_approvals()}
        deadline = time.monotonic() + 15
        while True:
            for token in reversed(self.link_tokens()):
                if token in self.used_links:
                    continue
                view = self.call("GET", f"/approvals/decide/{token}")
                if view.status_code == 200 and view.json()["data"]["approvalId"] in pending:
                    if use:
                        self.used_links.add(token)
                    return token
                self.used_links.add(token)
            if time.monotonic() > deadline:
                raise AssertionError("No approval link arrived within 15 s of a waiting run")
            self.start_waiting_run()
            time.sleep(0.5)
            pending = {approval["id"] for approval in self.pending()}

    @staticmethod
    def link_tokens() -> list[str]:
        with open(os.environ["TRELLIS_APPROVAL_LINKS"], encoding="utf-8") as file:
            return [line.strip() for line in file if line.strip()]

    def pending(self) -> list[dict[str, Any]]:
        return self.data("GET", "/approvals?status=Pending&pageSize=50")

    def start_waiting_run(self) -> None:
        # A workflow of its own each time: the fuzzer updates and deletes the workflows it finds,
        # but a run keeps the definition it started with.
        workflow = self.add_workflow(WAITING)
        self.data("POST", f"/workflows/{workflow}/executions", {"workflowId": workflow})


# The workflow whose triggers the hooks keep: one quick task per run.
TRIGGERING = {
    "name": "contract: fires triggers",
    "tasks": [{"name": "Fire", "type": {"plugin": "Flow/NoOp"}}],
}

# What each kind of trigger operation can succeed on, and how the hooks make one.
TRIGGER_KINDS: dict[str, tuple[Any, dict[str, Any]]] = {
    "webhook": (
        lambda t: (
            t["type"] == "Webhook"
            and t["status"] == "Active"
            and t["properties"].get("signature") == "None"
        ),
        {"type": "Webhook", "status": "Active", "properties": {"signature": "None"}},
    ),
    # Secret rotation: a Webhook trigger that signs (its secret shown masked).
    "signed": (
        lambda t: t["type"] == "Webhook" and t["properties"].get("secret") == "********",
        {"type": "Webhook", "status": "Active", "properties": {"signature": "StandardWebhooks"}},
    ),
    # Backfills: an Active trigger on `YEARLY`, which `yearly_windows()` know a firing of.
    "active": (
        lambda t: backfillable(t),
        {"type": "TimeBased", "status": "Active", "properties": {"cron": YEARLY}},
    ),
    "time_based": (
        lambda t: t["type"] == "TimeBased",
        {"type": "TimeBased", "status": "Active", "properties": {"cron": YEARLY}},
    ),
}


def backfillable(trigger: dict[str, Any]) -> bool:
    return (
        trigger["type"] == "TimeBased"
        and trigger["status"] == "Active"
        and trigger["properties"].get("cron") == YEARLY
    )


# The workflow the hooks run to have runs waiting for an approval: each waits 10 s at most.
WAITING = {
    "name": "contract: waits for a person",
    "tasks": [
        {
            "name": "Decide",
            "type": {"plugin": "Flow/NoOp"},
            "manualApproval": approval(10_000, "Reject", "The contract run decides this one."),
        },
        {
            "name": "Then",
            "type": {"plugin": "Flow/Log"},
            "dependencies": ["Decide"],
            "parameters": {"message": "done"},
        },
    ],
}

_trellis: dict[str, Trellis] = {}


def trellis_of(operation: schemathesis.APIOperation) -> Trellis:
    base_url = operation.schema.get_base_url()
    if base_url not in _trellis:
        _trellis[base_url] = Trellis(base_url)
    return _trellis[base_url]


# ---------------------------------------------------------------------------------------------
# 1-3. What positive cases are completed with


def resolve(document: dict[str, Any], schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema if isinstance(schema, dict) else {}


def body_properties(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A body's properties by name, those of every branch of a `oneOf` or `anyOf` included."""
    properties = {
        name: resolve(document, value) for name, value in schema.get("properties", {}).items()
    }
    for branch in [*schema.get("oneOf", []), *schema.get("anyOf", [])]:
        for name, value in body_properties(document, resolve(document, branch)).items():
            properties.setdefault(name, {})
            merged = properties[name]
            values = [*merged.get("enum", []), *value.get("enum", [])]
            if "const" in value:
                values.append(value["const"])
            properties[name] = {**value, **merged, "enum": values}
    return properties


def holds_definition(document: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether a property takes a workflow definition: a `oneOf` with the definition's schema."""
    for part in [schema, *schema.get("allOf", [])]:
        branches = resolve(document, part).get("oneOf", [])
        if any(branch.get("$ref") == DEFINITION_SCHEMA for branch in branches):
            return True
    return False


class Shape:
    """What the hooks fill in an operation's cases, from its schema alone."""

    def __init__(self, operation: schemathesis.APIOperation) -> None:
        document = operation.schema.raw_schema
        body = operation.definition.raw.get("requestBody", {})
        schema = resolve(
            document, body.get("content", {}).get("application/json", {}).get("schema", {})
        )
        properties = body_properties(document, schema)
        # Body properties holding a workflow definition (its text, or the object).
        self.definitions = [
            name for name, value in properties.items() if holds_definition(document, value)
        ]
        # Body arrays of objects each holding one (an apply's `workflows`), with that property.
        self.definition_lists = [
            (name, field)
            for name, value in properties.items()
            if value.get("type") == "array"
            for field, item in body_properties(
                document, resolve(document, value.get("items", {}))
            ).items()
            if holds_definition(document, item)
        ]
        # How many definitions a case is completed with: one per property, one for the arrays.
        self.definition_count = len(self.definitions) + (1 if self.definition_lists else 0)
        path_parameters = {parameter.name for parameter in operation.path_parameters}
        # Body properties named like a path parameter, which must equal it.
        self.path_echoes = [name for name in properties if name in path_parameters]
        # Operations on one execution (and its tasks and approvals) get a waiting run's ids, but
        # not a stream of events: that lasts as long as the run, and a waiting run waits.
        success = operation.definition.raw.get("responses", {}).get("200", {})
        streams = "text/event-stream" in success.get("content", {})
        self.on_execution = {"workflowId", "executionId"} <= path_parameters and not streams
        # A decision on one of those runs' approvals.
        self.decides = "approvalId" in path_parameters and operation.method.upper() == "POST"
        # Starting a run of the workflow in the path: `inputs` must fit what it declares, and
        # `revision` name one it has had.
        self.starts_run = "inputs" in properties and "workflowId" in self.path_echoes
        # A trigger's body: a type of the trigger types and properties that depend on it.
        trigger_type = resolve(document, properties.get("type", {}))
        self.trigger = "properties" in properties and "Webhook" in trigger_type.get("enum", [])
        self.updates_trigger = self.trigger and "triggerId" in self.path_echoes
        # A backfill's body: a time range.
        self.time_range = {"from", "to"} <= set(properties)
        # An API key's body: its expiry must be in the future (400 otherwise).
        self.expiry = "expiresAt" in properties
        # An apply that may delete the hooks' own workflows (section 9).
        self.prunes = "prune" in properties and "dryRun" in properties
        # A webhook delivery: its body is the run's inputs.
        self.webhook = operation.path.startswith("/hooks/")
        # An approval link's page and decision (section 8).
        self.link = operation.path.startswith("/approvals/decide/")
        self.link_decides = self.link and operation.method.upper() == "POST"
        # Operations on one trigger: which trigger the operation can succeed on.
        self.on_trigger: str | None = None
        if "triggerId" in path_parameters:
            self.on_trigger = (
                "webhook"
                if self.webhook or operation.path.endswith("/deliveries")
                else "signed"
                if operation.path.endswith("/rotate-secret")
                else "active"
                if operation.path.endswith("/backfill")
                else "time_based"
            )
        # In the examples and coverage phases, the ids in the path are made up (or the
        # document's examples): operations whose body must agree with the path, and backfills,
        # are pointed at what the hooks keep (section 2).
        self.own_path = bool(self.path_echoes or self.time_range)
        # What the coverage phase's positive cases are completed for (`map_case`): those, and
        # the definitions it would send as any JSON text.
        self.in_coverage = (
            self.own_path or bool(self.definitions or self.definition_lists) or self.expiry
        )

    @property
    def completes(self) -> bool:
        return bool(
            self.definitions
            or self.definition_lists
            or self.path_echoes
            or self.on_execution
            or self.trigger
            or self.time_range
            or self.expiry
            or self.webhook
            or self.on_trigger
            or self.link
        )


_shapes: dict[str, Shape] = {}


def shape_of(operation: schemathesis.APIOperation) -> Shape:
    if operation.label not in _shapes:
        _shapes[operation.label] = Shape(operation)
    return _shapes[operation.label]


def use_existing_trigger(case: schemathesis.Case) -> None:
    """Points the case's path at a trigger of the hooks' own that the operation can succeed on."""
    kind = shape_of(case.operation).on_trigger
    if kind is None:
        return
    workflow_id, trigger_id = trellis_of(case.operation).trigger_for(kind)
    path = dict(case.path_parameters or {})
    path["triggerId"] = trigger_id
    if "workflowId" in path:
        path["workflowId"] = workflow_id
    case.path_parameters = path
    if case.operation.path.endswith("/deliveries") and case.query and "after" in case.query:
        # A delivery log's `after` must name one of that trigger's deliveries (400 otherwise):
        # a drawn one never does.
        case.query = {name: value for name, value in case.query.items() if name != "after"}


def use_waiting_run(case: schemathesis.Case, index: int) -> None:
    """Points the case's path at a run waiting for an approval now, its approval and its task."""
    approvals = trellis_of(case.operation).waiting_approvals()
    chosen = approvals[index % len(approvals)]
    path = dict(case.path_parameters or {})
    path["workflowId"] = chosen["workflowId"]
    path["executionId"] = chosen["executionId"]
    if "approvalId" in path:
        path["approvalId"] = chosen["id"]
    if "taskExecutionId" in path:
        path["taskExecutionId"] = chosen["taskExecutionId"]
    case.path_parameters = path


def use_own_resources(case: schemathesis.Case) -> None:
    """Points the path of an operation whose body must agree with it at what the hooks keep: a
    trigger of theirs, the workflow they update, or the one they run and add triggers to."""
    shape = shape_of(case.operation)
    if shape.on_trigger is not None:
        use_existing_trigger(case)
        return
    path = dict(case.path_parameters or {})
    if "workflowId" in path:
        trellis = trellis_of(case.operation)
        path["workflowId"] = (
            trellis.updating_workflow() if shape.definitions else trellis.triggering_workflow()
        )
    case.path_parameters = path


def use_backfillable_trigger(case: schemathesis.Case) -> None:
    """A TimeBased trigger that fires on another schedule than `YEARLY` has no firing in the
    ranges drawn (a trigger of the document's examples, say): the backfill goes to one of the
    hooks' own instead. Other triggers stay: they are 404 or 409, not a range's 400."""
    path = case.path_parameters or {}
    if "workflowId" not in path or "triggerId" not in path:
        return
    trigger = trellis_of(case.operation).trigger(str(path["workflowId"]), str(path["triggerId"]))
    if (
        trigger is not None
        and trigger["type"] == "TimeBased"
        and trigger["status"] == "Active"
        and not backfillable(trigger)
    ):
        use_existing_trigger(case)


def fitting_inputs(declared: Any, material: dict[str, Any]) -> dict[str, Any]:
    """Values for the inputs a definition declares: each of its type, the optional ones given
    as `material["given"]` says, the required ones without a default always."""
    if not isinstance(declared, dict):
        return {}
    inputs: dict[str, Any] = {}
    for index, (name, declaration) in enumerate(sorted(declared.items())):
        if not isinstance(declaration, dict):
            continue
        kind = next((v for k, v in declaration.items() if k.lower() == "type"), None)
        required = any(k.lower() == "required" and v is True for k, v in declaration.items())
        has_default = any(k.lower() == "default" for k in declaration)
        given = material["given"][index % len(material["given"])]
        if kind in material["values"] and (given or (required and not has_default)):
            inputs[name] = material["values"][kind]
    return inputs


def of_type(kind: Any, value: Any) -> bool:
    """Whether a value has a declared input's JSON type."""
    if kind == "integer":
        return isinstance(value, int | float) and not isinstance(value, bool) and value % 1 == 0
    expected = {
        "string": str,
        "number": int | float,
        "boolean": bool,
        "object": dict,
        "array": list,
    }.get(kind)
    if expected is None or (kind == "number" and isinstance(value, bool)):
        return False
    return isinstance(value, expected)


def fit_run(
    case: schemathesis.Case, body: dict[str, Any], material: dict[str, Any], keep: bool
) -> None:
    """Gives a run of the workflow in the path inputs that fit what it declares, and a revision
    it has had (the one drawn, counted round its revisions). With `keep`, the inputs the body
    has that fit stay, and only missing required ones are added."""
    workflow_id = (case.path_parameters or {}).get("workflowId")
    workflow = trellis_of(case.operation).workflow(str(workflow_id)) if workflow_id else None
    if workflow is None:
        return
    definition = workflow["definition"] if isinstance(workflow["definition"], dict) else {}
    declared = next((v for k, v in definition.items() if k.lower() == "inputs"), None)
    declared = declared if isinstance(declared, dict) else {}
    given = body.get("inputs") if keep and isinstance(body.get("inputs"), dict) else {}
    kept = {
        name: value
        for name, value in given.items()
        if isinstance(declared.get(name), dict)
        and of_type(
            next((v for k, v in declared[name].items() if k.lower() == "type"), None), value
        )
    }
    inputs = {**fitting_inputs(declared, material), **kept}
    if inputs or material["send_empty"] or (keep and "inputs" in body):
        body["inputs"] = inputs
    else:
        body.pop("inputs", None)
    # Generated as an integer or an integral float (both are int32 in JSON).
    revision = body.get("revision")
    if of_type("integer", revision) and revision >= 1:
        body["revision"] = type(revision)(1 + (revision - 1) % workflow["revision"])


# What the examples and coverage phases complete their positive cases with: valid, fixed
# choices (those phases do not draw; the document's and the coverage's values are kept where
# the rules OpenAPI cannot state leave them alone).
FIXED_CHOICES: dict[str, Any] = {
    "waiting_run": False,
    "existing_trigger": False,
    "index": 0,
    "trigger": {
        "TimeBased": {"cron": YEARLY},
        "Webhook": {"signature": "None"},
    },
    "window": first_hour_of_year(),
    "inputs": {
        "values": {
            "string": "text",
            "number": 1.5,
            "integer": 2,
            "boolean": True,
            "object": {"a": 1},
            "array": [1, "two"],
        },
        "given": [True],
        "send_empty": True,
    },
    "empty": True,
    "link": False,
}


def fit_trigger(body: dict[str, Any]) -> None:
    """Links copy a listed trigger's type and properties into an update after the case was
    completed, and may pair a type with another type's properties: such properties are
    replaced with the fixed ones of the type."""
    properties = body.get("properties")
    needed = {"TimeBased": "cron", "Webhook": "signature"}.get(body.get("type"))
    if needed is None:
        return
    if not isinstance(properties, dict) or not any(k.lower() == needed for k in properties):
        body["properties"] = FIXED_CHOICES["trigger"][body["type"]]
    elif needed == "signature" and properties.get("signature") == "None":
        # A secret goes only with a signature (the document cannot relate the two values).
        body["properties"] = {
            k: v for k, v in properties.items() if k.lower() != "secret" or v == "********"
        }


# Inputs added just before a call: only those a run must be given.
REQUIRED_ONLY = {**FIXED_CHOICES["inputs"], "given": [False], "send_empty": False}


def complete(case: schemathesis.Case, choices: dict[str, Any]) -> schemathesis.Case:
    """Completes a positive case with what the document cannot say (see the module's notes)."""
    operation = case.operation
    shape = shape_of(operation)
    if choices["waiting_run"]:
        use_waiting_run(case, choices["index"])
        if shape.decides and isinstance(case.body, dict):
            # The hooks' approvals declare no inputs: a decision that brings some is 400.
            case.body = {key: value for key, value in case.body.items() if key != "inputs"}
    if choices["existing_trigger"]:
        use_existing_trigger(case)
    if shape.time_range:
        use_backfillable_trigger(case)
    if shape.webhook and choices["empty"]:
        case.body = {}
    if choices["link"]:
        token = trellis_of(operation).fresh_link(use=shape.link_decides)
        case.path_parameters = {**(case.path_parameters or {}), "token": token}
        if isinstance(case.body, dict):
            case.body = {key: value for key, value in case.body.items() if key != "inputs"}
    if isinstance(case.body, dict):
        body = {**case.body, **dict(zip(shape.definitions, choices["definitions"]))}
        for name, field in shape.definition_lists:
            if isinstance(body.get(name), list) and choices["definitions"]:
                body[name] = definitions_named_apart(body[name], field, choices["definitions"][-1])
        path = case.path_parameters or {}
        body.update({name: path[name] for name in shape.path_echoes if name in path})
        trigger = choices["trigger"]
        if shape.trigger and body.get("type") in trigger:
            body["properties"] = trigger[body["type"]]
        if shape.time_range:
            body.update(choices["window"])
        if shape.expiry and "expiresAt" in body:
            body["expiresAt"] = iso(int(time.time()) + 86400)
        if shape.starts_run:
            fit_run(case, body, choices["inputs"], keep=False)
        case.body = body
    return case


def definitions_named_apart(items: list[Any], field: str, text: str) -> list[Any]:
    """The array's objects each given the definition `text` under a name of its own (an apply
    refuses two definitions of one name)."""
    definition = json.loads(text)
    return [
        {**item, field: json.dumps({**definition, "name": f"{definition['name']} {index}"})}
        if isinstance(item, dict)
        else item
        for index, item in enumerate(items)
    ]


def is_positive(case: schemathesis.Case) -> bool:
    return case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE


def phase_of(case: schemathesis.Case) -> str | None:
    return None if case.meta is None else case.meta.phase.name


@schemathesis.hook
def flatmap_case(context: schemathesis.HookContext, case: schemathesis.Case) -> Any:
    operation = context.operation
    if operation is None or not is_positive(case) or not shape_of(operation).completes:
        return st.just(case)
    if phase_of(case) in (TestPhase.EXAMPLES, TestPhase.COVERAGE):
        return st.just(fixed_completion(case))
    shape = shape_of(operation)

    # What is drawn depends on the operation only, never on the case's values: in stateful runs
    # those come from earlier responses, and Hypothesis stops a run whose draws vary with them.
    # (Trigger properties are drawn for every type, and the case's type picks one; a Manual
    # trigger keeps the properties generated, which it takes whatever they are.)
    def maybe(needed: Any) -> Any:
        return st.booleans() if needed else st.just(False)

    triggers = st.fixed_dictionaries(
        {
            "TimeBased": time_based_properties(),
            "Webhook": webhook_properties(updating=shape.updates_trigger),
        }
    )
    inputs = st.fixed_dictionaries(
        {
            "values": st.fixed_dictionaries(input_values),
            "given": st.lists(st.booleans(), min_size=3, max_size=3),
            "send_empty": st.booleans(),
        }
    )
    count = shape.definition_count
    return st.fixed_dictionaries(
        {
            "definitions": st.lists(definitions(), min_size=count, max_size=count),
            "waiting_run": maybe(shape.on_execution),
            "existing_trigger": maybe(shape.on_trigger),
            "index": st.integers(0, 49),
            "trigger": triggers if shape.trigger else st.just({}),
            "window": yearly_windows() if shape.time_range else st.just({}),
            "inputs": inputs if shape.starts_run else st.just({}),
            "empty": maybe(shape.webhook),
            "link": maybe(shape.link),
        }
    ).map(lambda choices: complete(case, choices))


def fixed_completion(case: schemathesis.Case) -> schemathesis.Case:
    """The examples' and coverage's completion: own resources in the path, fixed choices. The
    document's examples keep their definitions and trigger properties (valid as written)."""
    shape = shape_of(case.operation)
    if shape.own_path:
        use_own_resources(case)
    choices = dict(FIXED_CHOICES)
    if phase_of(case) == TestPhase.EXAMPLES:
        choices["trigger"] = {}
        choices["definitions"] = []
        # Once per operation, whatever the time left for the phases that draw: an operation on
        # one run (its tasks, logs and approvals) on a waiting run's, so that its success path
        # is tried however far those phases get.
        choices["waiting_run"] = shape.on_execution
        # Likewise an operation on one trigger, on one of the hooks' own that fits it: the
        # draws that follow (half their cases) may not reach it before the run's time is up.
        choices["existing_trigger"] = shape.on_trigger is not None
    else:
        definition = {**TRIGGERING, "name": f"contract: updated {uuid.uuid4().hex[:8]}"}
        choices["definitions"] = [json.dumps(definition)] * shape.definition_count
    return complete(case, choices)


@schemathesis.hook
def map_case(context: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    """The coverage phase's positive cases (its cases are not drawn, so `flatmap_case` does not
    see them), for the operations whose body must agree with the path or with the server's state."""
    operation = context.operation
    if (
        operation is None
        or phase_of(case) != TestPhase.COVERAGE
        or not is_positive(case)
        or not shape_of(operation).in_coverage
    ):
        return case
    return fixed_completion(case)


@schemathesis.hook
def before_add_examples(
    context: schemathesis.HookContext, examples: list[schemathesis.Case]
) -> None:
    """The document's examples name made-up ids; for the operations whose body must agree with
    the path, they are pointed at what the hooks keep, their bodies otherwise as written."""
    operation = context.operation
    if operation is None or not shape_of(operation).own_path:
        return
    for index, case in enumerate(examples):
        if is_positive(case):
            examples[index] = fixed_completion(case)


# ---------------------------------------------------------------------------------------------
# 6. Before a call


@schemathesis.hook
def before_call(
    context: schemathesis.HookContext, case: schemathesis.Case, kwargs: dict[str, Any]
) -> None:
    """A positive case's body agrees with its path as it is sent: in stateful runs, links fill
    the path after the case was completed. A project's limits are sent as 0 (unlimited): a drawn
    `requestsPerMinute` of 3 on the hooks' own project would answer the rest of the run 429; and
    the hooks' own project keeps every plugin allowed.
    And in stateful runs, an `Idempotency-Key` becomes unique to its call."""
    operation = context.operation
    if operation is not None and is_positive(case) and isinstance(case.body, dict):
        shape = shape_of(operation)
        path = case.path_parameters or {}
        body = {**case.body, **{name: path[name] for name in shape.path_echoes if name in path}}
        if shape.starts_run:
            fit_run(case, body, REQUIRED_ONLY, keep=True)
        if shape.trigger:
            fit_trigger(body)
        if operation.path.startswith("/projects") and isinstance(body.get("limits"), dict):
            body["limits"] = {name: 0 for name in body["limits"]}
        project = path.get("projectId")
        if (
            operation.path == "/projects/{projectId}"
            and isinstance(project, str)
            and body.get("allowedPlugins") is not None
            and trellis_of(operation).is_own_project(project)
        ):
            # The hooks' own workflows use Flow/* plugins: a drawn list on their own project
            # would refuse every workflow they add for the rest of the run (400 not_allowed).
            body["allowedPlugins"] = None
        if shape.prunes and body.get("prune") is True:
            body["dryRun"] = True
        case.body = body
    if case.meta is None or case.meta.phase.name != TestPhase.STATEFUL:
        return
    headers = case.headers or {}
    for name, value in list(headers.items()):
        if name.lower() == "idempotency-key" and isinstance(value, str) and value:
            headers[name] = f"{value[:218]}-{uuid.uuid4()}"


# ---------------------------------------------------------------------------------------------
# 4-5. After a call


@schemathesis.hook
def after_call(
    context: schemathesis.HookContext, case: schemathesis.Case, response: schemathesis.Response
) -> None:
    operation = context.operation
    if operation is None or response.status_code != 200:
        return
    if operation.method.upper() == "DELETE" and operation.path == "/plugins":
        reinstall_flow_plugin(trellis_of(operation), case)
    elif case.meta is not None and case.meta.phase.name == TestPhase.STATEFUL:
        settle_started_run(trellis_of(operation), response)


def reinstall_flow_plugin(trellis: Trellis, case: schemathesis.Case) -> None:
    """Installs again a plugin `definitions()` uses, just uninstalled by the fuzzer."""
    body = case.body if isinstance(case.body, dict) else {}
    if body.get("Type") in FLOW_PLUGINS:
        trellis.data("POST", "/plugins", {"Type": body["Type"], "Version": body["Version"]})


def settle_started_run(trellis: Trellis, response: schemathesis.Response) -> None:
    """After a step started a run (without `waitSeconds`), waits until it paused or ended, 3 s at most."""
    try:
        data = response.json().get("data")
    except ValueError:
        return
    if not isinstance(data, dict) or "executionId" not in data or "status" in data:
        return
    path = f"/workflows/{data['workflowId']}/executions/{data['executionId']}"
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and trellis.data("GET", path)["status"] in SETTLING:
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# The check


@schemathesis.check
class every_operation_succeeds:
    """Fails the run when an operation never answered 2xx: its success path went untested.

    Every operation of the document counts, those added later included. One that cannot be
    reached needs an OpenAPI link (spec/common/links.tsp) from the operation that creates what it
    needs, or an example.
    """

    def __init__(self) -> None:
        self.tested: set[str] = set()
        self.succeeded: set[str] = set()

    def after_response(
        self,
        ctx: schemathesis.CheckContext,
        response: schemathesis.Response,
        case: schemathesis.Case,
    ) -> None:
        # Only the operation's own method: the run also probes its path with other methods.
        if response.request.method.upper() != case.operation.method.upper():
            return
        self.tested.add(case.operation.label)
        if 200 <= response.status_code < 300:
            self.succeeded.add(case.operation.label)

    def after_run(self, ctx: schemathesis.CheckContext) -> None:
        never = sorted(self.tested - self.succeeded)
        if never:
            raise AssertionError(
                "These operations never answered 2xx, so their success path went untested: "
                + ", ".join(never)
            )
