"""The walk-through of the generated clients' check (scripts/contract/generated-clients.sh).

Through the Python client openapi-generator's `python` generator makes from generated/openapi.yaml
(the package trellis_client), as a partner team would: nothing hand-written about the API. It runs
against a real Trellis (TRELLIS_URL, TRELLIS_USER, TRELLIS_PASSWORD) and stops at the first surprise.
"""

import json
import os
import sys
import time
import uuid

import trellis_client as trellis

url = os.environ["TRELLIS_URL"]


def client(**credentials) -> trellis.ApiClient:
    return trellis.ApiClient(trellis.Configuration(host=url, **credentials))


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def plugins(api: trellis.ApiClient) -> None:
    calls = trellis.PluginsApi(api)
    listed = calls.list_plugins().data
    delay = next((p for p in listed if p.type == "Flow/Delay"), None)
    assert delay, f"Flow/Delay is not among {len(listed)} plugins"

    versions = calls.list_plugins_by_type("Flow", "Delay").data
    assert versions and versions[0].type == "Flow/Delay", versions

    one = calls.get_plugin_or_list_by_type(str(delay.id)).data.actual_instance
    assert isinstance(one, trellis.PluginDetail) and one.type == "Flow/Delay", one


def configurations(api: trellis.ApiClient) -> uuid.UUID:
    calls = trellis.ConfigurationsApi(api)
    name = unique("storage-")

    def write(folder: str) -> trellis.ConfigurationWrite:
        return trellis.ConfigurationWrite(
            name=name,
            type="Storage/Local",
            version="1.0.0",
            specifications={"folder": folder},
        )

    configuration_id = calls.create_configuration(write("walkthrough")).data.id
    read = calls.get_configuration(configuration_id).data
    assert read.name == name and read.type == "Storage/Local", read
    calls.update_configuration(configuration_id, write("walkthrough-2"))
    assert calls.get_configuration(configuration_id).data.specifications == {
        "folder": "walkthrough-2"
    }
    assert name in [c.name for c in calls.list_configurations().data], name
    return configuration_id


def hello(name: str) -> dict:
    """The README's walk-through workflow: a delay, a step that waits for a person, a greeting."""
    return {
        "name": name,
        "variables": {"who": "world"},
        "outputs": {"greeting": "$[Outputs('Greet').message]"},
        "tasks": [
            {
                "name": "Wait",
                "type": {"plugin": "Flow/Delay"},
                "parameters": {"milliseconds": 300},
            },
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


def workflows(api: trellis.ApiClient) -> uuid.UUID:
    calls = trellis.WorkflowsApi(api)
    name = unique("Hello ")
    definition = trellis.DefinitionWorkflowDefinition.from_dict(hello(name))
    created = calls.add_workflow(
        trellis.WorkflowWrite(definition=trellis.WorkflowDefinitionInput(definition))
    ).data
    assert created.name == name, created

    stored = calls.get_workflow(created.id).data
    assert '"Greet"' in stored.workflow, stored.workflow

    # An update as the seed has it: the definition as JSON text.
    renamed = stored.workflow.replace(name, f"{name} (2)", 1)
    calls.update_workflow(
        created.id,
        trellis.WorkflowUpdate(definition=trellis.WorkflowDefinitionInput(renamed)),
    )
    assert any(
        w.id == created.id and w.name == f"{name} (2)" and w.revision == 2
        for w in calls.list_workflows().data
    ), f"workflow {created.id} at revision 2 is not listed"
    return created.id


def triggers(api: trellis.ApiClient, workflow_id: uuid.UUID) -> None:
    calls = trellis.TriggersApi(api)
    manual = trellis.ManualTriggerCreate(type="Manual", status="Active", properties={})
    manual_id = calls.create_trigger(
        workflow_id, trellis.TriggerCreate(manual)
    ).data.trigger_id
    timed = trellis.TimeBasedTriggerCreate(
        type="TimeBased",
        status="DeActive",
        properties=trellis.TimeBasedTriggerProperties(
            cron="0 6 * * 1", timezone="Europe/Paris"
        ),
    )
    timed_id = calls.create_trigger(
        workflow_id, trellis.TriggerCreate(timed)
    ).data.trigger_id

    ids = [t.id for t in calls.list_triggers(workflow_id).data]
    assert manual_id in ids and timed_id in ids, ids
    assert calls.get_trigger(workflow_id, timed_id).data.id == timed_id
    for trigger_id in (manual_id, timed_id):
        calls.delete_trigger(workflow_id, trigger_id)


def wait_for(api, workflow_id, execution_id, *statuses: str) -> trellis.ExecutionDetail:
    """Polls the execution until its status is one of these."""
    deadline = time.monotonic() + 60
    while True:
        detail = (
            trellis.ExecutionsApi(api).get_execution(workflow_id, execution_id).data
        )
        if detail.status.value in statuses:
            return detail
        assert time.monotonic() < deadline, (
            f"execution {execution_id} stayed {detail.status}"
        )
        time.sleep(0.2)


def run_with_approval(api: trellis.ApiClient, workflow_id: uuid.UUID) -> uuid.UUID:
    executions = trellis.ExecutionsApi(api)
    started = executions.execute_workflow(workflow_id, trellis.ExecuteWorkflowRequest())
    execution_id = started.data.execution_id
    wait_for(api, workflow_id, execution_id, "Paused")

    pending = executions.list_approvals(workflow_id, execution_id).data
    assert len(pending) == 1 and pending[0].task_name == "Approve", pending
    assert pending[0].status.value == "Pending", pending
    executions.approve_approval(
        workflow_id,
        execution_id,
        pending[0].id,
        approval_decision_request=trellis.ApprovalDecisionRequest(
            reason="Looks right."
        ),
    )

    final = wait_for(api, workflow_id, execution_id, "Completed", "Failed", "Canceled")
    assert final.status.value == "Completed", (
        f"the run ended {final.status}: {final.message}"
    )
    assert final.outputs == {"greeting": "Hello, world!"}, final.outputs

    tasks = executions.list_execution_tasks(workflow_id, execution_id).data
    assert [t.name for t in tasks] == ["Wait", "Approve", "Greet"], tasks
    assert all(t.status.value == "Completed" for t in tasks), tasks
    greet = next(t.id for t in tasks if t.name == "Greet")
    output = executions.get_execution_task(workflow_id, execution_id, greet).data.output
    assert output["message"] == "Hello, world!", output

    task_logs = executions.list_task_logs(workflow_id, execution_id, greet).data
    assert any("Hello, world!" in entry.message for entry in task_logs), task_logs
    assert executions.list_execution_logs(workflow_id, execution_id).data, (
        "no run log entry"
    )
    return execution_id


def cancel_run(api: trellis.ApiClient) -> None:
    workflows_api, executions = trellis.WorkflowsApi(api), trellis.ExecutionsApi(api)
    text = json.dumps(
        {
            "name": unique("Long "),
            "tasks": [
                {
                    "name": "Sleep",
                    "type": {"plugin": "Flow/Delay"},
                    "parameters": {"milliseconds": 60000},
                }
            ],
        }
    )
    workflow_id = workflows_api.add_workflow(
        trellis.WorkflowWrite(definition=trellis.WorkflowDefinitionInput(text))
    ).data.id
    started = executions.execute_workflow(workflow_id, trellis.ExecuteWorkflowRequest())
    execution_id = started.data.execution_id
    wait_for(api, workflow_id, execution_id, "Running")
    executions.cancel_execution(workflow_id, execution_id)
    wait_for(api, workflow_id, execution_id, "Canceled")
    workflows_api.delete_workflow(workflow_id)


def refused(status: int, call) -> trellis.ErrorEnvelope:
    """The typed error envelope of a call that must fail with this status."""
    try:
        call()
    except trellis.ApiException as error:
        assert error.status == status, (
            f"status {error.status}, wanted {status}: {error.body}"
        )
        envelope = trellis.ErrorEnvelope.from_json(error.body)
        assert not envelope.succeeded and envelope.messages and envelope.data is None, (
            envelope
        )
        return envelope
    raise AssertionError(f"the call succeeded, wanted {status}")


def codes(envelope: trellis.ErrorEnvelope) -> list[str]:
    return [detail.code for detail in envelope.errors]


def errors(admin: trellis.ApiClient) -> None:
    bad = trellis.WorkflowWrite(
        definition=trellis.WorkflowDefinitionInput(
            '{"name": "Bad", "tasks": [{"name": "A", "type": {"plugin": "Flow/Lgo"}}]}'
        )
    )
    invalid = refused(400, lambda: trellis.WorkflowsApi(admin).add_workflow(bad))
    assert codes(invalid) == ["validation.invalid"], invalid
    assert "Flow/Log" in (invalid.errors[0].suggestions or []), invalid

    stranger = client(username="nobody", password="wrong-password")
    unauthorized = refused(401, lambda: trellis.WorkflowsApi(stranger).list_workflows())
    assert "auth.unauthenticated" in codes(unauthorized), unauthorized

    # A key with the config role only may not add workflows.
    project = trellis.ProjectsApi(admin).create_project(
        trellis.ProjectWrite(name=unique("py-"))
    )
    key = trellis.APIKeysApi(admin).create_api_key(
        str(project.data.id),
        trellis.ApiKeyWrite(name="ci", roles=[trellis.Role.CONFIG]),
    )
    keyed = client(access_token=key.data.key)
    forbidden = refused(403, lambda: trellis.WorkflowsApi(keyed).add_workflow(bad))
    assert "auth.forbidden" in codes(forbidden), forbidden

    missing = refused(
        404, lambda: trellis.WorkflowsApi(admin).get_workflow(uuid.uuid4())
    )
    assert codes(missing) == ["workflow.not_found"], missing


def walk() -> None:
    admin = client(
        username=os.environ["TRELLIS_USER"], password=os.environ["TRELLIS_PASSWORD"]
    )
    version = trellis.SystemApi(admin).get_version()
    assert version.succeeded and version.data.version, version
    print(f"Trellis {version.data.version} at {url}")

    plugins(admin)
    configuration_id = configurations(admin)
    workflow_id = workflows(admin)
    triggers(admin, workflow_id)
    execution_id = run_with_approval(admin, workflow_id)
    cancel_run(admin)
    errors(admin)

    trellis.WorkflowsApi(admin).delete_workflow(workflow_id)
    refused(404, lambda: trellis.WorkflowsApi(admin).get_workflow(workflow_id))
    trellis.ConfigurationsApi(admin).delete_configuration(configuration_id)
    print(
        f"Python walk-through passed: workflow {workflow_id}, execution {execution_id}"
    )


if __name__ == "__main__":
    try:
        walk()
    except (AssertionError, trellis.ApiException) as failure:
        sys.exit(f"Python walk-through FAILED: {failure!r}")
