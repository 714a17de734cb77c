// The walk-through of the generated clients' check (scripts/contract/generated-clients.sh),
// through a Go client that oapi-codegen generates from generated/openapi.yaml into ./trellis,
// as a partner team would: nothing hand-written about the API. It runs against a real Trellis
// (TRELLIS_URL, TRELLIS_USER, TRELLIS_PASSWORD) and exits non-zero at the first surprise.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"trellis.test/walkthrough/trellis"
)

var ctx = context.Background()

func main() {
	if err := walk(); err != nil {
		fmt.Fprintln(os.Stderr, "Go walk-through FAILED:", err)
		os.Exit(1)
	}
}

// check fails the walk-through with what was expected when ok is false.
func check(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Errorf(format, args...))
	}
}

// answered checks a call's error and status, and gives its parsed body.
func answered[T any](status int, body *T, raw []byte, err error, want int) *T {
	check(err == nil, "request failed: %v", err)
	check(status == want, "status %d, wanted %d: %s", status, want, raw)
	check(body != nil, "status %d has no parsed body: %s", status, raw)
	return body
}

func client(url string, edit trellis.RequestEditorFn) *trellis.ClientWithResponses {
	c, err := trellis.NewClientWithResponses(url, trellis.WithRequestEditorFn(edit))
	check(err == nil, "client: %v", err)
	return c
}

func basic(user, password string) trellis.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.SetBasicAuth(user, password)
		return nil
	}
}

func bearer(token string) trellis.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

func walk() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	url := os.Getenv("TRELLIS_URL")
	admin := client(url, basic(os.Getenv("TRELLIS_USER"), os.Getenv("TRELLIS_PASSWORD")))

	version, e := admin.GetVersionWithResponse(ctx)
	v := answered(version.StatusCode(), version.JSON200, version.Body, e, 200)
	check(v.Succeeded && v.Data.Version != "", "version: %+v", v)
	fmt.Printf("Trellis %s at %s\n", v.Data.Version, url)

	plugins(admin)
	configurationId := configurations(admin)
	defer func() {
		deleted, e := admin.DeleteConfigurationWithResponse(ctx, configurationId, nil)
		answered(deleted.StatusCode(), deleted.JSON200, deleted.Body, e, 200)
	}()
	workflowId := workflows(admin)
	triggers(admin, workflowId)
	executionId := runWithApproval(admin, workflowId)
	cancelRun(admin)
	errors(admin, url)

	deleted, e := admin.DeleteWorkflowWithResponse(ctx, workflowId, nil)
	answered(deleted.StatusCode(), deleted.JSON200, deleted.Body, e, 200)
	gone, e := admin.GetWorkflowWithResponse(ctx, workflowId, nil)
	answered(gone.StatusCode(), gone.JSON404, gone.Body, e, 404)
	fmt.Printf("Go walk-through passed: workflow %s, execution %s\n", workflowId, executionId)
	return nil
}

func plugins(admin *trellis.ClientWithResponses) {
	list, e := admin.ListPluginsWithResponse(ctx, nil)
	all := answered(list.StatusCode(), list.JSON200, list.Body, e, 200).Data
	var delay *trellis.PluginListItem
	for i := range all {
		if all[i].Type == "Flow/Delay" {
			delay = &all[i]
		}
	}
	check(delay != nil, "Flow/Delay is not among %d plugins", len(all))

	byType, e := admin.ListPluginsByTypeWithResponse(ctx, "Flow", "Delay", nil)
	versions := answered(byType.StatusCode(), byType.JSON200, byType.Body, e, 200).Data
	check(len(versions) >= 1 && versions[0].Type == "Flow/Delay", "by type: %+v", versions)

	byId, e := admin.GetPluginOrListByTypeWithResponse(ctx, delay.Id.String(), nil)
	one := answered(byId.StatusCode(), byId.JSON200, byId.Body, e, 200)
	detail, e := one.Data.AsPluginDetail()
	check(e == nil && detail.Type == "Flow/Delay", "by id: %v %+v", e, detail)
}

func configurations(admin *trellis.ClientWithResponses) uuid.UUID {
	name := "storage-" + uuid.NewString()[:8]
	created, e := admin.CreateConfigurationWithResponse(ctx, nil, trellis.ConfigurationWrite{
		Name: name, Type: "Storage/Local", Version: "1.0.0",
		Specifications: map[string]any{"folder": "walkthrough"},
	})
	id := answered(created.StatusCode(), created.JSON200, created.Body, e, 200).Data.Id

	read, e := admin.GetConfigurationWithResponse(ctx, id, nil)
	got := answered(read.StatusCode(), read.JSON200, read.Body, e, 200).Data
	check(got.Name == name && got.Type == "Storage/Local", "configuration: %+v", got)

	updated, e := admin.UpdateConfigurationWithResponse(ctx, id, nil, trellis.ConfigurationWrite{
		Name: name, Type: "Storage/Local", Version: "1.0.0",
		Specifications: map[string]any{"folder": "walkthrough-2"},
	})
	answered(updated.StatusCode(), updated.JSON200, updated.Body, e, 200)

	list, e := admin.ListConfigurationsWithResponse(ctx, nil)
	names := []string{}
	for _, c := range answered(list.StatusCode(), list.JSON200, list.Body, e, 200).Data {
		names = append(names, c.Name)
	}
	check(slices.Contains(names, name), "%s is not listed in %v", name, names)
	return id
}

// hello is the README's walk-through workflow: a delay, a step that waits for a person, a greeting.
func hello(name string) trellis.DefinitionWorkflowDefinition {
	text := fmt.Sprintf(`{
		"name": %q,
		"variables": {"who": "world"},
		"outputs": {"greeting": "$[Outputs('Greet').message]"},
		"tasks": [
			{"name": "Wait", "type": {"plugin": "Flow/Delay"}, "parameters": {"milliseconds": 300}},
			{"name": "Approve", "type": {"plugin": "Flow/Log"}, "dependencies": ["Wait"],
			 "parameters": {"message": "approved"},
			 "manualApproval": {"enabled": true, "comment": "Go ahead?"}},
			{"name": "Greet", "type": {"plugin": "Flow/Log"}, "dependencies": ["Approve"],
			 "parameters": {"message": "Hello, $[Variables('who')]!"}}
		]
	}`, name)
	var definition trellis.DefinitionWorkflowDefinition
	check(json.Unmarshal([]byte(text), &definition) == nil, "the definition does not parse")
	return definition
}

func workflows(admin *trellis.ClientWithResponses) uuid.UUID {
	name := "Hello " + uuid.NewString()[:8]
	var definition trellis.WorkflowDefinitionInput
	check(definition.FromDefinitionWorkflowDefinition(hello(name)) == nil, "definition")
	added, e := admin.AddWorkflowWithResponse(ctx, nil, trellis.WorkflowWrite{Definition: definition})
	created := answered(added.StatusCode(), added.JSON200, added.Body, e, 200).Data
	check(created.Name == name, "added %+v", created)

	read, e := admin.GetWorkflowWithResponse(ctx, created.Id, nil)
	stored := answered(read.StatusCode(), read.JSON200, read.Body, e, 200).Data
	check(strings.Contains(stored.Workflow, `"Greet"`), "stored definition: %s", stored.Workflow)

	// An update as the seed has it: the definition as JSON text.
	renamed := strings.Replace(stored.Workflow, name, name+" (2)", 1)
	var text trellis.WorkflowDefinitionInput
	check(text.FromDefinitionText(renamed) == nil, "definition text")
	update, e := admin.UpdateWorkflowWithResponse(ctx, created.Id, nil, trellis.WorkflowUpdate{Definition: text})
	answered(update.StatusCode(), update.JSON200, update.Body, e, 200)

	list, e := admin.ListWorkflowsWithResponse(ctx, nil)
	found := false
	for _, w := range answered(list.StatusCode(), list.JSON200, list.Body, e, 200).Data {
		found = found || (w.Id == created.Id && w.Name == name+" (2)" && w.Revision == 2)
	}
	check(found, "workflow %s at revision 2 is not listed", created.Id)
	return created.Id
}

func triggers(admin *trellis.ClientWithResponses, workflowId uuid.UUID) {
	var manual trellis.TriggerCreate
	check(manual.FromManualTriggerCreate(trellis.ManualTriggerCreate{
		Type: trellis.ManualTriggerCreateTypeManual, Status: trellis.Active,
		Properties: trellis.ManualTriggerProperties{},
	}) == nil, "manual trigger")
	created, e := admin.CreateTriggerWithResponse(ctx, workflowId, nil, manual)
	manualId := answered(created.StatusCode(), created.JSON200, created.Body, e, 200).Data.TriggerId

	cron := "0 6 * * 1"
	zone := "Europe/Paris"
	var timed trellis.TriggerCreate
	check(timed.FromTimeBasedTriggerCreate(trellis.TimeBasedTriggerCreate{
		Type: trellis.TimeBasedTriggerCreateTypeTimeBased, Status: trellis.DeActive,
		Properties: trellis.TimeBasedTriggerProperties{Cron: &cron, Timezone: &zone},
	}) == nil, "time-based trigger")
	created, e = admin.CreateTriggerWithResponse(ctx, workflowId, nil, timed)
	timedId := answered(created.StatusCode(), created.JSON200, created.Body, e, 200).Data.TriggerId

	list, e := admin.ListTriggersWithResponse(ctx, workflowId, nil)
	ids := []uuid.UUID{}
	for _, t := range answered(list.StatusCode(), list.JSON200, list.Body, e, 200).Data {
		ids = append(ids, t.Id)
	}
	check(slices.Contains(ids, manualId) && slices.Contains(ids, timedId), "triggers %v", ids)

	read, e := admin.GetTriggerWithResponse(ctx, workflowId, timedId, nil)
	answered(read.StatusCode(), read.JSON200, read.Body, e, 200)
	for _, id := range []uuid.UUID{manualId, timedId} {
		deleted, e := admin.DeleteTriggerWithResponse(ctx, workflowId, id, nil)
		answered(deleted.StatusCode(), deleted.JSON200, deleted.Body, e, 200)
	}
}

// waitFor polls the execution until want says its status is reached.
func waitFor(admin *trellis.ClientWithResponses, workflowId, executionId uuid.UUID, want func(trellis.ExecutionStatus) bool) trellis.ExecutionDetail {
	deadline := time.Now().Add(60 * time.Second)
	for {
		read, e := admin.GetExecutionWithResponse(ctx, workflowId, executionId, nil)
		detail := answered(read.StatusCode(), read.JSON200, read.Body, e, 200).Data
		if want(detail.Status) {
			return detail
		}
		check(time.Now().Before(deadline), "execution %s stayed %s", executionId, detail.Status)
		time.Sleep(200 * time.Millisecond)
	}
}

func runWithApproval(admin *trellis.ClientWithResponses, workflowId uuid.UUID) uuid.UUID {
	started, e := admin.ExecuteWorkflowWithResponse(ctx, workflowId, nil, trellis.ExecuteWorkflowRequest{})
	executionId := answered(started.StatusCode(), started.JSON200, started.Body, e, 200).Data.ExecutionId
	waitFor(admin, workflowId, executionId, func(s trellis.ExecutionStatus) bool { return s == trellis.ExecutionStatusPaused })

	approvals, e := admin.ListApprovalsWithResponse(ctx, workflowId, executionId, nil)
	pending := answered(approvals.StatusCode(), approvals.JSON200, approvals.Body, e, 200).Data
	check(len(pending) == 1 && pending[0].TaskName == "Approve" && pending[0].Status == trellis.ApprovalStatusPending, "approvals %+v", pending)
	reason := "Looks right."
	approved, e := admin.ApproveApprovalWithResponse(ctx, workflowId, executionId, pending[0].Id, nil, trellis.ApprovalDecisionRequest{Reason: &reason})
	answered(approved.StatusCode(), approved.JSON200, approved.Body, e, 200)

	final := waitFor(admin, workflowId, executionId, func(s trellis.ExecutionStatus) bool {
		return s == trellis.ExecutionStatusCompleted || s == trellis.ExecutionStatusFailed || s == trellis.ExecutionStatusCanceled
	})
	check(final.Status == trellis.ExecutionStatusCompleted, "the run ended %s: %s", final.Status, final.Message)
	check(final.Outputs != nil && (*final.Outputs)["greeting"] == "Hello, world!", "outputs %v", final.Outputs)

	tasks, e := admin.ListExecutionTasksWithResponse(ctx, workflowId, executionId, nil)
	names := []string{}
	var greet uuid.UUID
	for _, t := range answered(tasks.StatusCode(), tasks.JSON200, tasks.Body, e, 200).Data {
		check(t.Status == trellis.TaskStatusCompleted, "task %s is %s", t.Name, t.Status)
		names = append(names, t.Name)
		if t.Name == "Greet" {
			greet = t.Id
		}
	}
	check(slices.Equal(names, []string{"Wait", "Approve", "Greet"}), "tasks %v", names)
	task, e := admin.GetExecutionTaskWithResponse(ctx, workflowId, executionId, greet, nil)
	output, _ := answered(task.StatusCode(), task.JSON200, task.Body, e, 200).Data.Output.(map[string]any)
	check(output["message"] == "Hello, world!", "Greet's output %v", output)

	taskLogs, e := admin.ListTaskLogsWithResponse(ctx, workflowId, executionId, greet, nil)
	said := false
	for _, entry := range answered(taskLogs.StatusCode(), taskLogs.JSON200, taskLogs.Body, e, 200).Data {
		said = said || strings.Contains(entry.Message, "Hello, world!")
	}
	check(said, "Greet's log does not say hello")
	runLogs, e := admin.ListExecutionLogsWithResponse(ctx, workflowId, executionId, nil)
	check(len(answered(runLogs.StatusCode(), runLogs.JSON200, runLogs.Body, e, 200).Data) > 0, "the run wrote no log entry")
	return executionId
}

func cancelRun(admin *trellis.ClientWithResponses) {
	name := "Long " + uuid.NewString()[:8]
	var definition trellis.WorkflowDefinitionInput
	check(definition.FromDefinitionText(fmt.Sprintf(`{"name": %q, "tasks": [
		{"name": "Sleep", "type": {"plugin": "Flow/Delay"}, "parameters": {"milliseconds": 60000}}]}`, name)) == nil, "definition")
	added, e := admin.AddWorkflowWithResponse(ctx, nil, trellis.WorkflowWrite{Definition: definition})
	workflowId := answered(added.StatusCode(), added.JSON200, added.Body, e, 200).Data.Id
	started, e := admin.ExecuteWorkflowWithResponse(ctx, workflowId, nil, trellis.ExecuteWorkflowRequest{})
	executionId := answered(started.StatusCode(), started.JSON200, started.Body, e, 200).Data.ExecutionId
	waitFor(admin, workflowId, executionId, func(s trellis.ExecutionStatus) bool { return s == trellis.ExecutionStatusRunning })
	canceled, e := admin.CancelExecutionWithResponse(ctx, workflowId, executionId, nil)
	answered(canceled.StatusCode(), canceled.JSON200, canceled.Body, e, 200)
	waitFor(admin, workflowId, executionId, func(s trellis.ExecutionStatus) bool { return s == trellis.ExecutionStatusCanceled })
	deleted, e := admin.DeleteWorkflowWithResponse(ctx, workflowId, nil)
	answered(deleted.StatusCode(), deleted.JSON200, deleted.Body, e, 200)
}

// errors reads each kind of refusal as the typed error envelope, with its stable code.
func errors(admin *trellis.ClientWithResponses, url string) {
	codes := func(envelope *trellis.ErrorEnvelope) []string {
		check(!bool(envelope.Succeeded) && len(envelope.Messages) > 0, "envelope %+v", envelope)
		out := []string{}
		for _, detail := range envelope.Errors {
			out = append(out, detail.Code)
		}
		return out
	}

	var bad trellis.WorkflowDefinitionInput
	check(bad.FromDefinitionText(`{"name": "Bad", "tasks": [{"name": "A", "type": {"plugin": "Flow/Lgo"}}]}`) == nil, "definition")
	refused, e := admin.AddWorkflowWithResponse(ctx, nil, trellis.WorkflowWrite{Definition: bad})
	invalid := answered(refused.StatusCode(), refused.JSON400, refused.Body, e, 400)
	check(slices.Equal(codes(invalid), []string{"validation.invalid"}), "400 codes %v", codes(invalid))
	suggested := invalid.Errors[0].Suggestions
	check(suggested != nil && slices.Contains(*suggested, "Flow/Log"), "no suggestion: %s", refused.Body)

	stranger := client(url, basic("nobody", "wrong-password"))
	unauthorized, e := stranger.ListWorkflowsWithResponse(ctx, nil)
	check(slices.Contains(codes(answered(unauthorized.StatusCode(), unauthorized.JSON401, unauthorized.Body, e, 401)), "auth.unauthenticated"), "401 code")

	// A key with the config role only may not add workflows.
	project := "go-" + uuid.NewString()[:8]
	made, e := admin.CreateProjectWithResponse(ctx, trellis.ProjectWrite{Name: project})
	projectId := answered(made.StatusCode(), made.JSON200, made.Body, e, 200).Data.Id
	key, e := admin.CreateApiKeyWithResponse(ctx, projectId.String(), trellis.ApiKeyWrite{Name: "ci", Roles: []trellis.Role{trellis.RoleConfig}})
	secret := answered(key.StatusCode(), key.JSON200, key.Body, e, 200).Data.Key
	keyed := client(url, bearer(secret))
	forbidden, e := keyed.AddWorkflowWithResponse(ctx, nil, trellis.WorkflowWrite{Definition: bad})
	check(slices.Contains(codes(answered(forbidden.StatusCode(), forbidden.JSON403, forbidden.Body, e, 403)), "auth.forbidden"), "403 code")

	missing, e := admin.GetWorkflowWithResponse(ctx, uuid.New(), nil)
	check(slices.Equal(codes(answered(missing.StatusCode(), missing.JSON404, missing.Body, e, 404)), []string{"workflow.not_found"}), "404 code")
}
