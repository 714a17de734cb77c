"""Schemathesis hooks of Trellis's contract run (`schemathesis.toml`, `scripts/contract-fuzz.sh`).

They give the fuzzer what the OpenAPI document cannot: test data that reaches the operations'
success paths, and a server that stays worth testing. None hides a response from a check: they
shape what is sent, in positive cases only (negative ones are left alone), and every response
still goes through every check.

1. Workflow definitions. A definition is JSON text whose `contentSchema` the document declares,
   but Schemathesis generates `contentMediaType: application/json` strings as any JSON value,
   and a definition must also be a DAG over installed plugins, which no JSON Schema says. So in
   every positive case whose body carries a definition (found by its `contentSchema`, so new
   operations with one are covered), the definition is drawn from `definitions()` below: valid,
   random DAGs over the built-in Flow plugins, a third of them starting with an approval that
   decides itself after a few seconds (so `waitSeconds` never waits long).

2. Ids in a body that must equal the path's (`workflowId`, `triggerId`): in half the positive
   cases with such a body field, it is set to the path parameter of the same name, so that
   creating triggers, updating workflows and executing them get past that rule, while the other
   half still test it (a 400 the configuration allows there).

3. A run that is there now. Ids of executions, tasks and approvals drawn from earlier responses
   rarely belong together or to a run still waiting (approvals decide themselves within seconds),
   so cancel, approve, reject and a task's reads would hardly ever succeed. In half the positive
   cases of an operation whose path names an execution, its ids are those of a run that waits
   for an approval at that moment (one of the fuzzer's own, or else a run the hooks start of a
   workflow they add for it), with that approval and its task.

4. Plugins the definitions use. Fuzzing uninstalls plugins (`DELETE /plugins` with a type and
   version drawn from earlier responses) and is right to: it must succeed. When it uninstalls one
   of the plugins `definitions()` uses, the hook installs it again at once through the API (and
   fails the run if that does not work), so that the rest of the run still adds and runs
   workflows. Other plugins stay uninstalled until the fuzzer installs them again itself.

5. Runs a stateful step started. The next step of a chain follows within milliseconds, before a
   new run has even created its approvals; the hook waits (at most 3 s) until the run has paused
   or ended, so that the links from a run to its approvals lead somewhere.

And a check, `every_operation_succeeds`: the run fails unless every operation answered 2xx at
least once, so that no success path goes untested unnoticed.
"""

from __future__ import annotations

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
            draw(st.integers(3000, 8000)), draw(st.sampled_from(["Approve", "Reject"])), draw(text)
        )
    # A suffix keeps names apart: Hypothesis draws small names first, and a taken name is 409.
    definition: dict[str, Any] = {
        "name": f"{draw(names)} {draw(st.uuids()).hex[:8]}",
        "tasks": tasks,
    }
    if variables:
        definition["variables"] = variables
    if draw(st.booleans()):
        definition["description"] = draw(text)
    return json.dumps(definition, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# The API itself, for the hooks that act on it (with the run's credentials, which
# schemathesis.toml reads from the same variables).


class Trellis:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.auth = (os.environ["TRELLIS_USER"], os.environ["TRELLIS_PASSWORD"])
        self.waiting_workflow: str | None = None

    def call(self, method: str, path: str, body: Any = None) -> requests.Response:
        return self.session.request(method, f"{self.base_url}{path}", json=body, timeout=30)

    def data(self, method: str, path: str, body: Any = None) -> Any:
        response = self.call(method, path, body)
        if response.status_code != 200:
            raise AssertionError(
                f"{method} {path} answered {response.status_code}: {response.text}"
            )
        return response.json()["data"]

    def waiting_approvals(self) -> list[dict[str, Any]]:
        """Approvals waiting for a decision now; when there are none, a run that waits is started."""
        pending = self.data("GET", "/approvals?status=Pending&pageSize=50")
        if pending:
            return pending
        if self.waiting_workflow is not None:
            started = self.call(
                "POST",
                f"/workflows/{self.waiting_workflow}/executions",
                {"workflowId": self.waiting_workflow},
            )
        if self.waiting_workflow is None or started.status_code == 404:  # deleted by the fuzzer
            self.waiting_workflow = self.data(
                "POST", "/workflows/Add", {"definition": json.dumps(WAITING)}
            )["id"]
            started = self.call(
                "POST",
                f"/workflows/{self.waiting_workflow}/executions",
                {"workflowId": self.waiting_workflow},
            )
        if started.status_code != 200:
            raise AssertionError(
                f"Starting a run that waits answered {started.status_code}: {started.text}"
            )
        execution = started.json()["data"]["executionId"]
        path = f"/workflows/{self.waiting_workflow}/executions/{execution}/approvals"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            approvals = [item for item in self.data("GET", path) if item["status"] == "Pending"]
            if approvals:
                return approvals
            time.sleep(0.05)
        raise AssertionError(f"The run {execution} did not ask for its approval within 10 s")


# The workflow the hooks run when no run waits for an approval: one that waits, for 10 s at most.
WAITING = {
    "name": f"contract: waits for a person {uuid.uuid4().hex[:8]}",
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


class Shape:
    """What the hooks fill in an operation's cases, from its schema alone."""

    def __init__(self, operation: schemathesis.APIOperation) -> None:
        document = operation.schema.raw_schema
        body = operation.definition.raw.get("requestBody", {})
        schema = resolve(
            document, body.get("content", {}).get("application/json", {}).get("schema", {})
        )
        properties = {
            name: resolve(document, value) for name, value in schema.get("properties", {}).items()
        }
        # Body properties holding a workflow definition (JSON text with the definition's schema).
        self.definitions = [
            name
            for name, value in properties.items()
            if value.get("contentSchema", {}).get("$ref") == DEFINITION_SCHEMA
        ]
        path_parameters = {parameter.name for parameter in operation.path_parameters}
        # Body properties named like a path parameter, which must equal it.
        self.path_echoes = [name for name in properties if name in path_parameters]
        # Operations on one execution (and its tasks and approvals) get a waiting run's ids.
        self.on_execution = {"workflowId", "executionId"} <= path_parameters

    @property
    def completes(self) -> bool:
        return bool(self.definitions or self.path_echoes or self.on_execution)


_shapes: dict[str, Shape] = {}


def shape_of(operation: schemathesis.APIOperation) -> Shape:
    if operation.label not in _shapes:
        _shapes[operation.label] = Shape(operation)
    return _shapes[operation.label]


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


@schemathesis.hook
def flatmap_case(context: schemathesis.HookContext, case: schemathesis.Case) -> Any:
    operation = context.operation
    positive = case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE
    if operation is None or not positive or not shape_of(operation).completes:
        return st.just(case)
    shape = shape_of(operation)

    # What is drawn depends on the operation only, never on the case's values: in stateful runs
    # those come from earlier responses, and Hypothesis stops a run whose draws vary with them.
    def completed(drawn: tuple[list[str], bool, bool, int]) -> schemathesis.Case:
        definitions_text, waiting_run, echo, index = drawn
        if waiting_run:
            use_waiting_run(case, index)
        if isinstance(case.body, dict):
            body = {**case.body, **dict(zip(shape.definitions, definitions_text))}
            if echo:
                path = case.path_parameters or {}
                body.update({name: path[name] for name in shape.path_echoes if name in path})
            case.body = body
        return case

    return st.tuples(
        st.lists(definitions(), min_size=len(shape.definitions), max_size=len(shape.definitions)),
        st.booleans() if shape.on_execution else st.just(False),
        st.booleans() if shape.path_echoes else st.just(False),
        st.integers(0, 49),
    ).map(completed)


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
