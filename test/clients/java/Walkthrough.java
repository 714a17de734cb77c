// The walk-through of the generated clients' check (scripts/contract/generated-clients.sh),
// through a Java client that openapi-generator (`java`, okhttp-gson) generates from
// generated/openapi.yaml into the packages trellis, trellis.api and trellis.model, as a partner
// team would: nothing hand-written about the API. It runs against a real Trellis (TRELLIS_URL,
// TRELLIS_USER, TRELLIS_PASSWORD) and exits non-zero at the first surprise.

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import trellis.ApiClient;
import trellis.ApiException;
import trellis.api.ApiKeysApi;
import trellis.api.ConfigurationsApi;
import trellis.api.ExecutionsApi;
import trellis.api.PluginsApi;
import trellis.api.ProjectsApi;
import trellis.api.SystemApi;
import trellis.api.TriggersApi;
import trellis.api.WorkflowsApi;
import trellis.model.ApiKeyWrite;
import trellis.model.ApprovalDecisionRequest;
import trellis.model.ApprovalStatus;
import trellis.model.ConfigurationWrite;
import trellis.model.DefinitionWorkflowDefinition;
import trellis.model.ErrorDetail;
import trellis.model.ErrorEnvelope;
import trellis.model.ExecuteWorkflowRequest;
import trellis.model.ExecutionDetail;
import trellis.model.ExecutionStatus;
import trellis.model.ManualTriggerCreate;
import trellis.model.PluginDetail;
import trellis.model.PluginOfType;
import trellis.model.PluginListItem;
import trellis.model.ProjectWrite;
import trellis.model.Role;
import trellis.model.TaskListItem;
import trellis.model.TaskStatus;
import trellis.model.TimeBasedTriggerCreate;
import trellis.model.TimeBasedTriggerProperties;
import trellis.model.Trigger;
import trellis.model.TriggerCreate;
import trellis.model.TriggerStatus;
import trellis.model.WorkflowDefinitionInput;
import trellis.model.WorkflowUpdate;
import trellis.model.WorkflowWrite;

public final class Walkthrough {
  private final String url = System.getenv("TRELLIS_URL");
  private final ApiClient admin =
      basic(System.getenv("TRELLIS_USER"), System.getenv("TRELLIS_PASSWORD"));

  public static void main(String[] args) {
    try {
      new Walkthrough().walk();
    } catch (Exception e) {
      System.err.println("Java walk-through FAILED: " + e);
      System.exit(1);
    }
  }

  /** Fails the walk-through with what was expected when ok is false. */
  static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  static String unique(String prefix) {
    return prefix + UUID.randomUUID().toString().substring(0, 8);
  }

  private ApiClient basic(String user, String password) {
    ApiClient client = new ApiClient().setBasePath(url);
    client.setUsername(user);
    client.setPassword(password);
    return client;
  }

  private ApiClient bearer(String token) {
    ApiClient client = new ApiClient().setBasePath(url);
    client.setBearerToken(token);
    return client;
  }

  void walk() throws Exception {
    var version = new SystemApi(admin).getVersion();
    check(
        version.getSucceeded() && !version.getData().getVersion().isEmpty(), "version: " + version);
    System.out.println("Trellis " + version.getData().getVersion() + " at " + url);

    plugins();
    UUID configurationId = configurations();
    UUID workflowId = workflows();
    triggers(workflowId);
    UUID executionId = runWithApproval(workflowId);
    cancelRun();
    errors();

    var workflows = new WorkflowsApi(admin);
    workflows.deleteWorkflow(workflowId, null);
    refusal(404, () -> workflows.getWorkflow(workflowId, null));
    new ConfigurationsApi(admin).deleteConfiguration(configurationId, null);
    refusal(404, () -> new ConfigurationsApi(admin).getConfiguration(configurationId, null));
    System.out.println(
        "Java walk-through passed: workflow " + workflowId + ", execution " + executionId);
  }

  void plugins() throws ApiException {
    var plugins = new PluginsApi(admin);
    List<PluginListItem> all = plugins.listPlugins(null, null).getData();
    PluginListItem delay =
        all.stream()
            .filter(p -> p.getType().equals("Flow/Delay"))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("Flow/Delay is not among " + all.size()));

    List<PluginDetail> versions = plugins.listPluginsByType("Flow", "Delay", null, null).getData();
    check(
        !versions.isEmpty() && versions.get(0).getType().equals("Flow/Delay"),
        "by type: " + versions);

    // One path, two shapes: an id answers one plugin, a group or type a list of them.
    PluginDetail byId =
        plugins
            .getPluginOrListByType(delay.getId().toString(), null, null)
            .getData()
            .getPluginDetail();
    check(byId.getType().equals("Flow/Delay"), "by id: " + byId);
    for (String type : List.of("Flow", "Flow/Delay")) {
      List<PluginOfType> listed =
          plugins.getPluginOrListByType(type, null, null).getData().getListPluginOfType();
      check(listed.stream().anyMatch(p -> p.getType().equals("Flow/Delay")), type + ": " + listed);
    }
  }

  UUID configurations() throws ApiException {
    var configurations = new ConfigurationsApi(admin);
    String name = unique("storage-");
    var write =
        new ConfigurationWrite()
            .name(name)
            .type("Storage/Local")
            .version("1.0.0")
            .specifications(Map.of("folder", "walkthrough"));
    UUID id = configurations.createConfiguration(write, null).getData().getId();

    var got = configurations.getConfiguration(id, null).getData();
    check(
        got.getName().equals(name) && got.getType().equals("Storage/Local"),
        "configuration: " + got);

    configurations.updateConfiguration(
        id, write.specifications(Map.of("folder", "walkthrough-2")), null);
    check(
        configurations
            .getConfiguration(id, null)
            .getData()
            .getSpecifications()
            .get("folder")
            .equals("walkthrough-2"),
        "the configuration was not updated");

    var names =
        configurations.listConfigurations(null, null, null).getData().stream()
            .map(c -> c.getName())
            .toList();
    check(names.contains(name), name + " is not listed in " + names);
    return id;
  }

  /** The README's walk-through workflow: a delay, a step that waits for a person, a greeting. */
  static DefinitionWorkflowDefinition hello(String name) throws java.io.IOException {
    return DefinitionWorkflowDefinition.fromJson(
        """
{
  "name": "%s",
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
}"""
            .formatted(name));
  }

  UUID workflows() throws Exception {
    var workflows = new WorkflowsApi(admin);
    String name = unique("Hello ");
    var created =
        workflows
            .addWorkflow(
                new WorkflowWrite().definition(new WorkflowDefinitionInput(hello(name))),
                null,
                null)
            .getData();
    check(created.getName().equals(name), "added " + created);

    var stored = workflows.getWorkflow(created.getId(), null).getData();
    check(stored.getWorkflow().contains("\"Greet\""), "stored definition: " + stored.getWorkflow());

    // An update as the seed has it: the definition as JSON text.
    String renamed = stored.getWorkflow().replace(name, name + " (2)");
    workflows.updateWorkflow(
        created.getId(),
        new WorkflowUpdate().definition(new WorkflowDefinitionInput(renamed)),
        null,
        null);

    boolean listed =
        workflows.listWorkflows(null, null, null).getData().stream()
            .anyMatch(
                w ->
                    w.getId().equals(created.getId())
                        && w.getName().equals(name + " (2)")
                        && w.getRevision() == 2);
    check(listed, "workflow " + created.getId() + " at revision 2 is not listed");
    return created.getId();
  }

  void triggers(UUID workflowId) throws ApiException {
    var triggers = new TriggersApi(admin);
    var manual =
        new ManualTriggerCreate()
            .type(ManualTriggerCreate.TypeEnum.MANUAL)
            .status(TriggerStatus.ACTIVE)
            .properties(Map.of());
    UUID manualId =
        triggers
            .createTrigger(workflowId, new TriggerCreate(manual), null)
            .getData()
            .getTriggerId();

    var timed =
        new TimeBasedTriggerCreate()
            .type(TimeBasedTriggerCreate.TypeEnum.TIME_BASED)
            .status(TriggerStatus.DE_ACTIVE)
            .properties(
                new TimeBasedTriggerProperties().cron("0 6 * * 1").timezone("Europe/Paris"));
    UUID timedId =
        triggers.createTrigger(workflowId, new TriggerCreate(timed), null).getData().getTriggerId();

    var ids =
        triggers.listTriggers(workflowId, null, null, null).getData().stream()
            .map(Trigger::getId)
            .toList();
    check(ids.contains(manualId) && ids.contains(timedId), "triggers " + ids);

    var read = triggers.getTrigger(workflowId, timedId, null).getData();
    check(
        read.getStatus() == TriggerStatus.DE_ACTIVE
            && "0 6 * * 1".equals(read.getProperties().get("cron")),
        "time-based trigger " + read);
    for (UUID id : List.of(manualId, timedId)) {
      triggers.deleteTrigger(workflowId, id, null);
    }
  }

  /** Polls the execution until want says its status is reached. */
  ExecutionDetail waitFor(UUID workflowId, UUID executionId, Predicate<ExecutionStatus> want)
      throws Exception {
    var executions = new ExecutionsApi(admin);
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (true) {
      ExecutionDetail detail = executions.getExecution(workflowId, executionId, null).getData();
      if (want.test(detail.getStatus())) {
        return detail;
      }
      check(
          Instant.now().isBefore(deadline),
          "execution " + executionId + " stayed " + detail.getStatus());
      Thread.sleep(200);
    }
  }

  UUID runWithApproval(UUID workflowId) throws Exception {
    var executions = new ExecutionsApi(admin);
    UUID executionId =
        executions
            .executeWorkflow(workflowId, new ExecuteWorkflowRequest(), null, null, null)
            .getData()
            .getExecutionId();
    waitFor(workflowId, executionId, s -> s == ExecutionStatus.PAUSED);

    var pending = executions.listApprovals(workflowId, executionId, null, null, null).getData();
    check(
        pending.size() == 1
            && pending.get(0).getTaskName().equals("Approve")
            && pending.get(0).getStatus() == ApprovalStatus.PENDING,
        "approvals " + pending);
    executions.approveApproval(
        workflowId,
        executionId,
        pending.get(0).getId(),
        null,
        new ApprovalDecisionRequest().reason("Looks right."));

    ExecutionDetail last =
        waitFor(
            workflowId,
            executionId,
            s ->
                s == ExecutionStatus.COMPLETED
                    || s == ExecutionStatus.FAILED
                    || s == ExecutionStatus.CANCELED);
    check(
        last.getStatus() == ExecutionStatus.COMPLETED,
        "the run ended " + last.getStatus() + ": " + last.getMessage());
    check(
        last.getOutputs() != null && "Hello, world!".equals(last.getOutputs().get("greeting")),
        "outputs " + last.getOutputs());

    List<TaskListItem> tasks =
        executions.listExecutionTasks(workflowId, executionId, null, null, null).getData();
    for (TaskListItem task : tasks) {
      check(
          task.getStatus() == TaskStatus.COMPLETED,
          "task " + task.getName() + " is " + task.getStatus());
    }
    var names = tasks.stream().map(TaskListItem::getName).toList();
    check(names.equals(List.of("Wait", "Approve", "Greet")), "tasks " + names);
    UUID greet = tasks.get(2).getId();
    Object output =
        executions.getExecutionTask(workflowId, executionId, greet, null).getData().getOutput();
    check(
        output instanceof Map<?, ?> fields && "Hello, world!".equals(fields.get("message")),
        "Greet's output " + output);

    boolean said =
        executions
            .listTaskLogs(workflowId, executionId, greet, null, null, null, null)
            .getData()
            .stream()
            .anyMatch(entry -> entry.getMessage().contains("Hello, world!"));
    check(said, "Greet's log does not say hello");
    check(
        !executions
            .listExecutionLogs(workflowId, executionId, null, null, null, null, null)
            .getData()
            .isEmpty(),
        "the run wrote no log entry");
    return executionId;
  }

  void cancelRun() throws Exception {
    var workflows = new WorkflowsApi(admin);
    var executions = new ExecutionsApi(admin);
    String definition =
        """
        {"name": "%s", "tasks": [{"name": "Sleep", "type": {"plugin": "Flow/Delay"},
          "parameters": {"milliseconds": 60000}}]}"""
            .formatted(unique("Long "));
    UUID workflowId =
        workflows
            .addWorkflow(
                new WorkflowWrite().definition(new WorkflowDefinitionInput(definition)), null, null)
            .getData()
            .getId();
    UUID executionId =
        executions
            .executeWorkflow(workflowId, new ExecuteWorkflowRequest(), null, null, null)
            .getData()
            .getExecutionId();
    waitFor(workflowId, executionId, s -> s == ExecutionStatus.RUNNING);
    executions.cancelExecution(workflowId, executionId, null);
    waitFor(workflowId, executionId, s -> s == ExecutionStatus.CANCELED);
    workflows.deleteWorkflow(workflowId, null);
  }

  interface Call {
    Object send() throws ApiException;
  }

  /** The refusal a call must meet, read as the typed error envelope. */
  static ErrorEnvelope refusal(int status, Call call) throws java.io.IOException {
    try {
      call.send();
    } catch (ApiException e) {
      check(
          e.getCode() == status,
          "status " + e.getCode() + ", wanted " + status + ": " + e.getResponseBody());
      ErrorEnvelope envelope = ErrorEnvelope.fromJson(e.getResponseBody());
      check(!envelope.getSucceeded() && !envelope.getMessages().isEmpty(), "envelope " + envelope);
      return envelope;
    }
    throw new IllegalStateException("the call succeeded, wanted " + status);
  }

  static List<String> codes(ErrorEnvelope envelope) {
    return envelope.getErrors().stream().map(ErrorDetail::getCode).toList();
  }

  /** Each kind of refusal, read as the typed error envelope with its stable code. */
  void errors() throws Exception {
    var workflows = new WorkflowsApi(admin);
    var bad =
        new WorkflowWrite()
            .definition(
                new WorkflowDefinitionInput(
                    """
                    {"name": "Bad", "tasks": [{"name": "A", "type": {"plugin": "Flow/Lgo"}}]}"""));
    ErrorEnvelope invalid = refusal(400, () -> workflows.addWorkflow(bad, null, null));
    check(codes(invalid).equals(List.of("validation.invalid")), "400 codes " + codes(invalid));
    List<String> suggested = invalid.getErrors().get(0).getSuggestions();
    check(suggested != null && suggested.contains("Flow/Log"), "no suggestion: " + invalid);

    ApiClient stranger = basic("nobody", "wrong-password");
    var unauthorized =
        refusal(401, () -> new WorkflowsApi(stranger).listWorkflows(null, null, null));
    check(codes(unauthorized).contains("auth.unauthenticated"), "401 codes " + codes(unauthorized));

    // A key with the config role only may not add workflows.
    String project = unique("java-");
    UUID projectId =
        new ProjectsApi(admin).createProject(new ProjectWrite().name(project)).getData().getId();
    String secret =
        new ApiKeysApi(admin)
            .createApiKey(
                projectId.toString(), new ApiKeyWrite().name("ci").roles(List.of(Role.CONFIG)))
            .getData()
            .getKey();
    var forbidden =
        refusal(403, () -> new WorkflowsApi(bearer(secret)).addWorkflow(bad, null, null));
    check(codes(forbidden).contains("auth.forbidden"), "403 codes " + codes(forbidden));

    var missing = refusal(404, () -> workflows.getWorkflow(UUID.randomUUID(), null));
    check(codes(missing).equals(List.of("workflow.not_found")), "404 codes " + codes(missing));
  }
}
