"""The README's walk-through, through a Python client generated from generated/openapi.yaml.

Proves the document is usable outside TypeScript: `scripts/contract/python-client.sh` generates the client
with openapi-python-client (nothing hand-written about the API), installs it and runs this against
a real Trellis (TRELLIS_URL, TRELLIS_USER, TRELLIS_PASSWORD). Every response is parsed into the
generated models; any surprise (an undeclared status, a field the models lack, a wrong value)
fails with an assertion and a non-zero exit.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from trellis_client import Client
from trellis_client.api.executions import (
    approve_approval,
    execute_workflow,
    get_execution,
    get_execution_task,
    list_approvals,
    list_execution_logs,
    list_execution_tasks,
    list_task_logs,
)
from trellis_client.api.plugins import list_plugins
from trellis_client.api.system import get_version
from trellis_client.api.workflows import add_workflow, get_workflow
from trellis_client.models import (
    ApprovalDecisionRequest,
    ApprovalListResponse,
    ApprovalStatus,
    ConfirmationResponse,
    ErrorEnvelope,
    ExecuteWorkflowRequest,
    ExecutionResponse,
    ExecutionStartedResponse,
    ExecutionStatus,
    LogEntryListResponse,
    PluginListResponse,
    TaskListResponse,
    TaskResponse,
    TaskStatus,
    VersionResponse,
    WorkflowCreatedResponse,
    WorkflowResponse,
    WorkflowWrite,
)

T = TypeVar("T")

# The README's "Hello" workflow: a delay, a step that waits for a person, a log line using a
# variable.
HELLO = {
    "name": f"Hello {uuid.uuid4().hex[:8]}",
    "variables": {"who": "world"},
    "tasks": [
        {"name": "Wait", "type": {"plugin": "Flow/Delay"}, "parameters": {"milliseconds": 500}},
        {
            "name": "Approve",
            "type": {"plugin": "Flow/Log"},
            "dependencies": ["Wait"],
            "parameters": {"message": "approved"},
            "manualApproval": {"enabled": True, "comment": "Go ahead?"},
        },
        {
            "name": "Greet",
            "type": {"plugin": "Flow/Log"},
            "dependencies": ["Approve"],
            "parameters": {"message": "Hello, $[Variables('who')]!"},
        },
    ],
}


def ok(response: Any, expected_type: type[T]) -> T:
    """The parsed body of a 200, as the generated model for it."""
    assert response.status_code == 200, f"{response.status_code}: {response.content!r}"
    parsed = response.parsed
    assert isinstance(parsed, expected_type), f"parsed as {type(parsed).__name__}"
    assert parsed.succeeded is True
    return parsed


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 60) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def main() -> None:
    client = Client(
        base_url=os.environ["TRELLIS_URL"],
        httpx_args={
            "auth": httpx.BasicAuth(os.environ["TRELLIS_USER"], os.environ["TRELLIS_PASSWORD"])
        },
        raise_on_unexpected_status=True,
    )
    with client as client:
        version = ok(get_version.sync_detailed(client=client), VersionResponse)
        print(f"Trellis {version.data.version} at {os.environ['TRELLIS_URL']}")

        # The built-in plugins are installed on first start.
        plugins = ok(list_plugins.sync_detailed(client=client), PluginListResponse)
        types = {plugin.type_ for plugin in plugins.data}
        assert {"Flow/Delay", "Flow/Log"} <= types, types

        # Add the workflow; it is stored exactly as sent.
        body = WorkflowWrite(definition=json.dumps(HELLO))
        added = ok(add_workflow.sync_detailed(client=client, body=body), WorkflowCreatedResponse)
        workflow_id = added.data.id
        assert added.data.name == HELLO["name"]
        stored = ok(get_workflow.sync_detailed(workflow_id, client=client), WorkflowResponse)
        assert json.loads(stored.data.workflow) == HELLO

        # Run it, then see it pause for the approval.
        request = ExecuteWorkflowRequest(workflow_id=workflow_id)
        started = ok(
            execute_workflow.sync_detailed(workflow_id, client=client, body=request),
            ExecutionStartedResponse,
        )
        execution_id = started.data.execution_id
        assert started.data.workflow_id == workflow_id

        def status() -> ExecutionStatus:
            response = get_execution.sync_detailed(workflow_id, execution_id, client=client)
            return ok(response, ExecutionResponse).data.status

        wait_for(
            "the run to pause for its approval", lambda: status() == ExecutionStatus.PAUSED or None
        )
        approvals = ok(
            list_approvals.sync_detailed(workflow_id, execution_id, client=client),
            ApprovalListResponse,
        )
        [approval] = approvals.data
        assert approval.task_name == "Approve" and approval.comment == "Go ahead?"
        assert approval.status == ApprovalStatus.PENDING

        # Approve, then read the tasks and the logs.
        decision = ApprovalDecisionRequest(reason="Looks right.")
        ok(
            approve_approval.sync_detailed(
                workflow_id, execution_id, approval.id, client=client, body=decision
            ),
            ConfirmationResponse,
        )
        ended = (ExecutionStatus.COMPLETED, ExecutionStatus.FAILED, ExecutionStatus.CANCELED)

        def end() -> ExecutionStatus | None:
            current = status()
            return current if current in ended else None

        final = wait_for("the run to end", end)
        assert final == ExecutionStatus.COMPLETED, final

        tasks = ok(
            list_execution_tasks.sync_detailed(workflow_id, execution_id, client=client),
            TaskListResponse,
        )
        by_name = {task.name: task for task in tasks.data}
        assert list(by_name) == ["Wait", "Approve", "Greet"], list(by_name)
        assert all(task.status == TaskStatus.COMPLETED for task in by_name.values())
        greet = ok(
            get_execution_task.sync_detailed(
                workflow_id, execution_id, by_name["Greet"].id, client=client
            ),
            TaskResponse,
        )
        assert greet.data.output["message"] == "Hello, world!", greet.data.output

        def task_logs(name: str) -> list[str]:
            response = list_task_logs.sync_detailed(
                workflow_id, execution_id, by_name[name].id, client=client
            )
            return [entry.message for entry in ok(response, LogEntryListResponse).data]

        assert any("Hello, world!" in message for message in task_logs("Greet")), task_logs("Greet")
        assert any("Looks right." in message for message in task_logs("Approve")), task_logs(
            "Approve"
        )
        run_logs = ok(
            list_execution_logs.sync_detailed(workflow_id, execution_id, client=client),
            LogEntryListResponse,
        )
        assert run_logs.data, "the run wrote no log entry"

        # Errors come back as the error envelope, with stable codes.
        missing = get_workflow.sync_detailed(uuid.uuid4(), client=client)
        assert missing.status_code == 404 and isinstance(missing.parsed, ErrorEnvelope)
        assert [error.code for error in missing.parsed.errors] == ["workflow.not_found"]

    print(f"Walk-through passed: workflow {workflow_id}, execution {execution_id}")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print(f"Walk-through FAILED: {error}", file=sys.stderr)
        raise
