"""The override file's schema: strict pydantic models (unknown keys fail), located errors."""

from __future__ import annotations

import json
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import pydantic
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, closest
from generator.base.format_cache import TextStore, default_directory, sources_text
from generator.base.yamlsrc import Located, load_yaml
from generator.spec.patches import SpecPatch
from generator.spec.pinned import REPO_ROOT

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSection(Strict):
    name: str = Field(description="serverInfo.name, e.g. github-issues-mcp")
    package: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Python package to generate")
    title: str
    version: str
    description: str | None = Field(
        default=None, min_length=1, max_length=100,
        description="one line on what the server does, for its distribution, its MCP Registry entry "
        "(server.json allows 100 characters) and its MCP Bundle; default: '<title> MCP server'")
    tool_prefix: str = Field(pattern=r"^[a-z][a-z0-9]*_$")
    forge: str = Field(
        default="github", description="the forge profile the runtime talks by (ghmcp_runtime.core.forges): "
        "github or forgejo; it decides token and URL variables, auth scheme, headers, paging, error bodies")
    api_version: str | None = Field(
        default=None, description="the API version header's value (GitHub: X-GitHub-Api-Version); "
        "default: the forge profile's")
    spec: str | None = Field(
        default=None, pattern=r"^[a-z][a-z0-9_-]*$",
        description="the vendored description the server is built on: spec/<spec>/ (e.g. forgejo); "
        "default: spec/ itself, GitHub's")
    hooks: str | None = Field(
        default=None, description="hand-written hook module, relative to the override file; only for "
        "tools, templates or completions a declaration cannot express")
    summary: str = Field(description="capability summary: rules first, then context")
    tools_budget_bytes: int | None = Field(
        default=None, gt=0, description="budget for the whole tools/list, output schemas included "
        "(what a client stores, not what a model reads); default: reported, not enforced")
    description_budget_bytes: int = Field(default=600, gt=0, description="budget for one tool description")
    model_budget_bytes: int | None = Field(
        default=None, gt=0, description="budget for what a model reads of tools/list (name, description "
        "and inputSchema of each tool, compact JSON); default 1,500 B per tool")


class Coverage(Strict):
    categories: list[str] = Field(
        default_factory=list, description="spec categories whose every operation must be used or excluded")
    subcategories: list[str] = Field(
        default_factory=list, description="spec subcategories (GitHub's x-github.subcategory, e.g. "
        "sub-issues) claimed the same way, for a server that covers part of a category")
    excluded: dict[str, str] = Field(default_factory=dict, description="operationId -> one-line reason")


class ErrorCodeDef(Strict):
    temporary: bool
    description: str
    repair: str = Field(description="what the repair suggests, for the error catalog")


class ShapeField(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    source: str | None = Field(default=None, alias="from", description="dotted path; [] maps a list")
    detail: Literal["summary", "full"] = "full"
    transform: Literal["preview"] | None = None
    computed: dict[str, Any] | Literal["version"] | None = Field(
        default=None, description="`version` (the shape's declared content version), or the JSON "
        "schema of a value a hook supplies")
    fields: list[ShapeField] | None = Field(default=None, description="project an object field by field")
    description: str | None = None
    nullable: bool | None = Field(
        default=None, description="may the row carry null here? Default: derived from the spec (null "
        "when a property on the path is nullable or not required); `false` asserts GitHub always "
        "sends a value (the example-output rule then checks GitHub's examples), `true` widens")
    untrusted: bool = Field(
        default=False, description="user-authored text: markup GitHub's page hides (HTML "
        "comments outside code) and invisible characters are removed and counted in the row's "
        "hidden_removed")
    decode: Literal["base64_text", "content_kind"] | None = Field(
        default=None, description="the value is encoded content beside an `encoding` (a contents "
        "API's base64): base64_text is its text (null when binary, absent or too large), "
        "content_kind says text, binary or too_large")
    max_bytes: int | None = Field(
        default=None, gt=0, description="text longer than this many UTF-8 bytes is cut at a line "
        "break and ends with a sentinel saying how much is shown")
    absent_in: list[str] = Field(
        default_factory=list, description="sources (of the shape's `sources`) whose rows lack this "
        "path (e.g. a search hit has no head branch): null in their rows")


class LockdownDef(Strict):
    author: str = Field(description="dotted path of the author's login, e.g. user.login")
    repository: str = Field(description="dotted path of an API URL naming the repository as the "
                            "forge's repository read does (.../repos/{owner}/{repo}...), e.g. repository_url")
    association: str | None = Field(default=None, description="dotted path of the author's "
                                    "association (GitHub's author_association; saves permission "
                                    "checks), on a forge that sends one")
    withhold: list[str] = Field(min_length=1, description="optional output fields removed, under "
                                "lockdown, from rows whose author lacks push access")


class ShapeDef(Strict):
    sources: list[str] = Field(
        min_length=1, description="component schemas (e.g. label) or operation responses "
        "(e.g. issues/get-label#response) the paths must exist in")
    fields: list[ShapeField] = Field(min_length=1)
    version: dict[str, str] | None = Field(
        default=None, description="content version: name -> dotted path of each field it covers")
    lockdown: LockdownDef | None = Field(
        default=None, description="what lockdown withholds from rows by authors without push access")


ParamType = Literal["string", "integer", "boolean", "array"]


class ParamDef(Strict):
    name: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$",
                             description="required unless `use` names a shared parameter")
    use: str | None = Field(default=None, description="a parameter of the top-level `parameters`; "
                            "keys given here override its keys (a bare name in `params` is short for this)")
    source: str | None = Field(
        default=None, alias="from", description="<operationId>#<path|query|body>.<name>"
    )
    type: ParamType | list[ParamType] | None = Field(
        default=None, description="a list for a value of several types, e.g. [integer, string] with `resolve`")
    items: dict[str, Any] | None = None
    enum: list[Any] | None = None
    description: str | None = Field(default=None, description="required (here or in the shared parameter)")
    required: bool = False
    omitted: str | None = Field(default=None, description="what leaving the parameter out means")
    default: Any = None
    nullable: bool = False
    null_means: str | None = None
    clear_with: Any = Field(
        default=None, description="with nullable: what a null argument is sent as, for a forge that "
        "clears a value with a sentinel instead of null (Forgejo clears a milestone with 0)")
    pattern: str | None = None
    advertise_pattern: bool = Field(
        default=True, description="false: the server checks `pattern` (and its items') but the "
        "inputSchema a model reads leaves it out, for identifiers whose form a model knows (owner, repo, logins)")
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    transform: str | None = Field(
        default=None, description="a registered transform applied before any call (e.g. hex_color)")
    given: bool = Field(
        default=False, description="an identifier the agent has from outside this server (a URL, "
        "another server, the user): no tool here must return it (rule composability)")
    resolve: ResolveDef | None = Field(
        default=None, description="a string value is a name, looked up in a listing and replaced by "
        "what it names (e.g. a milestone title by its number) before any step")


def _shared_reference(value: Any) -> Any:
    """`- owner` in a tool's params is short for `- {use: owner}`."""
    return {"use": value} if isinstance(value, str) else value


class Annotations(Strict):
    read_only: bool
    open_world: bool
    destructive: bool | None = None
    idempotent: bool | None = None
    why: str = Field(description="one line: why these hints")


class LocalDef(Strict):
    repository: str = Field(description="the rows' path to their repository's API URL (repository_url)")
    fields: list[str] = Field(min_length=1, description="shape fields that are null on a row of another "
                              "repository than the call's (its issue number would name another issue here)")


class OutputField(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: Literal["string", "integer", "boolean", "array", "object"] | None = None
    shape: str | None = None
    items_shape: str | None = None
    items: dict[str, Any] | None = None
    optional: bool = False
    nullable: bool = False
    description: str | None = Field(default=None, description="only where the name is not enough")
    source: str | list[str] | dict[str, Any] | None = Field(
        default=None, alias="from", description="declared tools: a step id (shapes; a list = first "
        "that produced a body, or every one for items_shape) or a reference template such as "
        "{step.field} (an object of templates builds an object)")
    version_of: str | None = Field(
        default=None, description="declared tools: the content version (by this shape's `version`) "
        "of the body of the step named in `from`")
    exclude: str | None = Field(default=None, description="rows with this field set are dropped")
    detail: Literal["summary", "full"] | None = Field(
        default=None, description="fixed row density (default: the `detail` parameter, else full)")
    include: list[str] = Field(default_factory=list, description="full-density fields added to summary rows")
    omit: list[str] = Field(default_factory=list, description="projected fields left out of the rows")
    when_more: str | None = Field(default=None, description="present only while that paged step has more")
    items_at: str | None = Field(
        default=None, description="with items_shape: dotted path of the rows inside each source's "
        "body (e.g. check_runs), for a step that is not paginated")
    local: LocalDef | None = Field(
        default=None, description="shaped rows that may be of another repository than the call's owner/repo")
    true_when: Condition | None = Field(
        default=None, description="a boolean: whether this condition holds once the steps ran, e.g. "
        "{step: add, status: 201}")


class Rule(Strict):
    kind: Literal["at_least_one", "exactly_one", "all_or_none", "requires", "not_together",
                  "not_blank", "excludes", "disjoint", "distinct", "required_when",
                  "forbidden_when"]
    fields: list[str] = Field(min_length=1)
    when: str | dict[str, Any] | None = Field(
        default=None, description="for `requires`: the field that triggers it; for `required_when` and "
        "`forbidden_when`: that field, or {field: value} / {field: [values]} (only these values trigger it)")
    equals: bool | int | str | None = Field(
        default=None, description="for `requires`: the value `fields` must have (default: any value)")
    values: list[bool | int | str] = Field(
        default_factory=list, description="for `excludes`: one value per field; all of them together are refused")
    normalize: str | None = Field(
        default=None, description="for `disjoint`: the transform both lists' items are compared through")
    message: str | None = Field(default=None, description="the error's message (default: Invalid arguments: <reason>)")
    reason: str


class MatchDef(Strict):
    status: int | None = Field(default=None, ge=400, le=599)
    github_code: str | None = Field(default=None, description="errors[0].code of a 422, e.g. already_exists")
    code: str | None = Field(default=None, description="the code the generic mapping chose, e.g. label_not_found")
    field: str | None = Field(default=None, description="the parameter the failure names (details.field)")
    message_contains: str | None = Field(
        default=None, min_length=1, description="GitHub's `message` contains this text (any case), e.g. "
        "'must have push access'")
    message_matches: str | None = Field(
        default=None, min_length=1, description="GitHub's `message` matches this regular expression (re.search)")
    method: list[Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]] = Field(
        default_factory=list, description="the failed request's HTTP method is one of these")


class RepairDef(Strict):
    next_step: Identifier
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict, description="values: templates such as {owner}")
    alternative: str | None = None
    toolset: str | None = Field(
        default=None, description="the tool is another override file's, in this toolset of the forge "
        "(checked when the forge is generated); a surface without it answers without the repair")


class ErrorDef(Strict):
    code: Identifier | None = None
    message: str | None = None
    field: str | None = None
    reason: str | None = None
    repair: RepairDef | None = None
    details: dict[Identifier, str] = Field(
        default_factory=dict, description="more details: name -> template, e.g. {url: \"{issue.html_url}\"} "
        "(values the forge answered or identifiers; never free-form text a caller sent)")


class ResolveCheckDef(Strict):
    call: str = Field(description="a GET reading one entry by its id")
    path: dict[str, Any] = Field(default_factory=dict, description="default: parameters of the same name")
    unknown: ErrorDef = Field(description="no entry has the id: the error (field defaults to the parameter)")


class ResolveDef(Strict):
    call: str = Field(description="a list operation (GET, array of rows) whose rows carry the names")
    path: dict[str, Any] = Field(default_factory=dict, description="default: parameters of the same name")
    query: dict[str, Any] = Field(default_factory=dict)
    match: str = Field(description="dotted path of the name in each row, e.g. title")
    value: str = Field(description="dotted path of what replaces the name, e.g. number")
    choices: int = Field(default=20, ge=1, le=50, description="names listed in details.choices on a miss")
    pages: int = Field(default=10, ge=1, le=10, description="pages of 100 rows read at most")
    unknown: ErrorDef = Field(description="no row has the name: the error (field defaults to the parameter)")
    keep: list[str] = Field(default_factory=list, description="words the parameter takes as they are, "
                            "never looked up as names (e.g. none, any)")
    check: ResolveCheckDef | None = Field(
        default=None, description="an id is read first by this request; not found refuses it before any write")


class OnErrorDef(ErrorDef):
    when: MatchDef
    skip: bool = Field(default=False, description="the step then produced nothing (no error)")


class RejectDef(ErrorDef):
    present: str = Field(description="dotted path in the response body; set (not null) -> refuse")


class PaginateDef(Strict):
    cursor: str | None = Field(default=None, description="the tool parameter carrying the cursor")
    page_param: str | None = Field(default=None, description="resources: the URI variable with the page number")
    size_param: str | None = Field(default=None, description="resources: the URI variable with the page size")
    next_uri: str | None = Field(default=None, description="resources: the next page's URI (templates read {next_page}, {page_size})")
    next_query: dict[str, Any] = Field(default_factory=dict, description="resources: its query, URL-encoded")
    page_size: int = Field(default=30, ge=1, le=100)
    style: Literal["link", "total_count"] = "link"
    items: str | None = Field(default=None, description="where the rows are in the body (search: items)")
    has_more: str = "has_more"
    next_cursor: str = "next_cursor"


class CompareDef(Strict):
    against: Identifier = Field(description="the step that read the current state")
    fields: dict[str, str] = Field(description="body field -> dotted path in that step's body")
    normalize: dict[str, str] = Field(default_factory=dict, description="body field -> transform")
    changed: str = Field(default="changed_fields", description="output field listing what changed")
    carry: list[str] = Field(
        default_factory=list, description="body fields sent with every change but never compared or "
        "reported (a forge that resets a field a PATCH leaves out: send the read's own value)")


class StepCondition(Strict):
    """How an earlier step ended (every key given must hold)."""

    step: Identifier = Field(description="an earlier step's id")
    status: int | list[int] | None = Field(default=None, description="its answer's HTTP status (one of)")
    code: Identifier | None = Field(
        default=None, description="the error code of its failure, which an on_error rule skipped")
    empty: bool | None = Field(
        default=None, description="true: it produced no body ([], {}, 204, skipped or did not run)")


Condition = str | StepCondition | dict[str, Any]


class GuardDef(Strict):
    count: list[str] = Field(default_factory=list, description="dotted paths in this step's body, summed")
    total: bool = Field(default=False, description="count the listing's total as the forge reports "
                        "it (Forgejo: the X-Total-Count header); with count, both are summed")
    refuse: ErrorDef
    when: dict[str, Any] | None = None
    unknown: ErrorDef | None = Field(default=None, description="this step failed: the count is unknown")
    incomplete: str | None = None
    unknown_field: str | None = None


class AbsentDef(Strict):
    match: dict[str, Any] = Field(min_length=1, description="row field -> template; a row equal on "
                                  "every one of them refuses the call")
    refuse: ErrorDef = Field(description="the error when such a row exists (nothing is written)")
    pages: int = Field(default=10, ge=1, le=20, description="pages of the listing read at most")
    other_than: dict[str, Any] = Field(
        default_factory=dict, description="row field -> template naming the resource being changed: "
        "a row equal on these is that resource (an edit keeping its own name) and refuses nothing")


class NamesExistDef(Strict):
    params: list[str] = Field(min_length=1, description="array parameters whose names must be in the catalog")
    code: Identifier = Field(description="the error code when some are missing, e.g. label_not_found")
    kind: str = Field(default="label", description="what a name names, for the message")
    lookup: str | None = Field(default=None, description="operation reading one entry by {name}")
    repair: RepairDef | None = None
    key: str = Field(default="name", description="the catalog entry's field holding the name (login)")
    lookup_param: str = Field(default="name", description="the lookup's path parameter naming the entry")
    absent: str = Field(default="do not exist in the repository",
                        description="what the message says of the missing names")


class VerifyDef(Strict):
    fields: dict[str, str] = Field(description="body field -> dotted path in the write's answer")
    normalize: dict[str, str] = Field(default_factory=dict, description="body field -> transform")
    ignored: str = Field(default="ignored_fields", description="output listing what GitHub did not apply")


class SettleDef(Strict):
    against: str | None = Field(
        default=None, description="on a delete (no compare): the earlier read whose not-found, once "
        "the answer was lost, shows the delete took effect; on a create: the earlier `absent` step, "
        "whose one matching row, once the answer was lost, is what the write made")
    find: str | None = Field(
        default=None, description="on a delete whose read names the resource by something another "
        "client can change (a label's name): a list operation; the delete took effect only if no "
        "row has the resource's id (a rename moved it)")
    path: dict[str, Any] = Field(
        default_factory=dict, description="path parameters of the compare read where the write leaves "
        "the resource (a rename: {name: \"{new_name}\"}); templates read parameters only, and one "
        "reading an omitted parameter keeps the read's own value")


class ShownDef(Strict):
    source: str = Field(alias="from", description="dotted path in the resource; [] maps a list (a set)")
    normalize: str | None = Field(default=None, description="a transform both sides are compared through (trim, fold)")


class SentWithDef(Strict):
    lead: str = Field(description="the body field this one goes with (state_reason goes with state)")
    default: dict[str, Any] = Field(
        default_factory=dict, description="the lead's value -> this field's value when the caller gave none")
    stores: dict[str, Any] = Field(
        default_factory=dict, description="the lead's value -> the value the forge stores for this field "
        "whatever is sent (reopening stores reopened); this field then changes only when the lead does")


class MemberWriteDef(Strict):
    param: str = Field(description="the array parameter naming the members")
    call: str = Field(description="operationId of the request; its other path parameters are the tool's")
    each: str | None = Field(default=None, description="a path parameter naming one member: one request per member")
    body: str | None = Field(default=None, description="the body field listing the members: one request for all")
    answer: str | None = Field(
        default=None, description="dotted path in the answer holding the whole list (\"\": the answer is "
        "the list); omit when the answer does not show it")
    done: Identifier | None = Field(
        default=None, description="a 404 mapped to this code means the member was already absent")
    path: dict[str, Any] = Field(
        default_factory=dict, description="the request's other path parameters (templates); default: "
        "the tool parameter mapped to that path parameter (or of that name)")


class MemberSetDef(Strict):
    view: str = Field(description="the `shows` entry of the set: list[].key")
    kind: str = Field(description="what a member is called in messages (label, login)")
    add: MemberWriteDef | None = None
    remove: MemberWriteDef | None = None
    max: int | None = Field(default=None, ge=1, description="the forge keeps at most this many members and "
                            "silently ignores adds past it: those are not sent and reported ignored")


class ToggleDef(Strict):
    param: str = Field(description="a boolean parameter, shown by the `shows` entry of that name")
    on_true: str = Field(description="operationId of the request for true")
    on_false: str = Field(description="operationId of the request for false")
    reason: str | None = Field(default=None, description="a parameter sent in on_true's body under its name")
    path: dict[str, Any] = Field(
        default_factory=dict, description="path parameters of both requests (templates); default: the "
        "tool parameter mapped to that path parameter (or of that name)")


class VersionDef(Strict):
    param: str = Field(description="the parameter carrying a version the caller read")
    shape: str = Field(description="the shape whose declared version it is")
    repair: RepairDef | None = None


class UpdateDef(Strict):
    against: Identifier = Field(description="the earlier step that read the resource")
    noun: str = Field(description="what the resource is called in messages (issue)")
    shows: dict[str, str | ShownDef] = Field(
        description="parameter (or set) -> where the resource shows it; changed_fields follow this order")
    sent_with: dict[str, SentWithDef] = Field(
        default_factory=dict, description="body field -> the body field it is always sent with")
    exact: list[Identifier] = Field(
        default_factory=list, description="names_exist steps whose exact names replace their parameters' values")
    sets: list[MemberSetDef] = Field(default_factory=list, description="add/remove parameters against a list field")
    toggles: list[ToggleDef] = Field(default_factory=list, description="booleans written by an on and an off request")
    version: VersionDef | None = None
    changed: str = Field(default="changed_fields", description="output listing the fields that changed")
    ignored: str = Field(default="ignored_fields", description="output listing the parameters the forge ignored")


class StepDef(Strict):
    id: Identifier | None = Field(default=None, description="default: the operation name in snake_case")
    call: str = Field(description="operationId")
    path: dict[str, Any] = Field(default_factory=dict)
    query: dict[str, Any] = Field(default_factory=dict)
    body: dict[str, Any] = Field(default_factory=dict)
    when: Condition | list[Condition] | None = Field(
        default=None, description="a parameter name (present) or {param: value}; a list: all hold")
    unless: Condition | list[Condition] | None = Field(
        default=None, description="run only when this parameter is absent (or the step condition "
        "fails); a list: none of them holds")
    join: dict[str, str] = Field(
        default_factory=dict, description="query field -> separator: the field's value is a list of "
        "part templates; a part reading anything absent or null is left out, the rest are joined "
        "(optional search qualifiers: {q: \" \"})")
    on_error: list[OnErrorDef] = Field(default_factory=list)
    reject: list[RejectDef] = Field(default_factory=list)
    paginate: PaginateDef | None = None
    compare: CompareDef | None = None
    guard: GuardDef | None = None
    names_exist: NamesExistDef | None = Field(
        default=None, description="this step's operation is the catalog the names must exist in")
    absent: AbsentDef | None = Field(
        default=None, description="this step's listing must hold no row like `match` (a name still free)")
    verify: VerifyDef | None = Field(default=None, description="report body fields the answer does not show")
    settle: SettleDef | None = Field(
        default=None, description="a write with compare: re-read the resource after a lost answer, "
        "and where a rename left it when the compare read finds nothing")
    stored: dict[str, str] | None = Field(
        default=None, description="a write sending text: body field -> dotted path in the answer; "
        "stored_as_sent and altered_fields say whether GitHub holds the text exactly as sent")
    update: UpdateDef | None = Field(
        default=None, description="this write is the PATCH of an update plan: set members, toggles and "
        "the resource's own fields, in waves, judged by what the forge shows")


class RecoverDef(Strict):
    call: str = Field(description="a list operation whose rows include what the write created")
    path: dict[str, Any] = Field(default_factory=dict)
    query: dict[str, Any] = Field(default_factory=dict)
    match: dict[str, Any] = Field(min_length=1, description="row field -> template: the text sent")
    newest_first: bool = Field(default=False, description="rows come newest-created first")
    author_param: str | None = Field(default=None, description="query parameter filtering by author")
    author_field: str = Field(default="user", description="row field holding the author object")
    since_param: str | None = Field(
        default="since", description="query parameter filtering by update time; null when none")
    repair: RepairDef | None = Field(default=None, description="where to look if the outcome stays unknown")
    created_field: str = Field(default="created_at", description="row field saying when it was made, "
                               "compared with when the first attempt began (a review: submitted_at)")


class IdempotencyDef(Strict):
    key: str = Field(description="the parameter carrying the client's idempotency key")
    scope: list[str] = Field(default_factory=list, description="parameters the key is scoped to")
    write: Identifier = Field(description="the step whose lost response may be recovered")
    recover: RecoverDef | None = None


class ConfirmDef(Strict):
    message: str = Field(description="the question; reads parameters and, in a batch, {count} and {items}")
    when: str | dict[str, Any] | None = Field(default=None, description="ask only then: a parameter or {param: value}")
    over: int = Field(default=0, ge=0, description="a batch asks only for more items than this")


class BatchSourceDef(Strict):
    tool: str = Field(description="a paged listing tool of this server (cursor in, has_more and next_cursor out)")
    param: Identifier = Field(description="the object parameter this tool gets, holding the listing's filters")
    description: str = Field(description="the filter parameter's description")
    omitted: str = Field(description="what leaving the filter parameter out means")
    fixed: dict[str, Any] = Field(default_factory=dict, description="the listing's other arguments (templates)")
    rows: str = Field(description="the listing's output holding the rows")
    field: str = Field(description="the row field naming an item")


class BatchShowsDef(Strict):
    source: str = Field(alias="from", description="the object output of `each` whose fields a changed item's row shows")
    fields: list[str] = Field(min_length=1, description="its fields, as the change left them (no read-back)")


class BatchCommentDef(Strict):
    param: str = Field(description="this tool's text parameter; given, each changed item gets the comment")
    tool: str = Field(description="the single-item tool that posts it (its validation, key and answer)")
    body: str = Field(description="that tool's parameter the text fills")
    arguments: dict[str, Any] = Field(default_factory=dict, description="its other arguments (templates); "
                                      "the item fills the batch's `item` parameter")
    key: str | None = Field(default=None, description="its idempotency-key parameter, filled per item from "
                            "the call's key (or the call) and the item")
    id: str = Field(description="dotted path of the id in its answer, shown as the row's comment_id")


class BatchDef(Strict):
    each: str = Field(description="the tool that changes one item; it runs once per item")
    item: str = Field(description="its parameter an item fills, e.g. issue_number")
    items: str | None = Field(default=None, description="this tool's list parameter naming the items")
    source: BatchSourceDef | None = Field(default=None, description="items a listing finds instead")
    arguments: dict[str, Any] = Field(default_factory=dict, description="each's other arguments (templates)")
    zip: dict[str, str] = Field(default_factory=dict, description="list parameter -> each's parameter, "
                                "paired with `items` by position")
    changed: str = Field(default="changed_fields", description="each's output naming what it changed")
    dry_run: str | None = Field(default=None, description="the boolean parameter asking for a dry run")
    cursor: str = Field(default="cursor", description="the parameter carrying next_cursor")
    key: str | None = Field(default=None, description="the idempotency-key parameter")
    scope: list[str] = Field(default_factory=list, description="parameters the key is scoped to")
    max_items: int = Field(default=100, ge=1, le=100, description="items per call")
    confirm: ConfirmDef | None = None
    shows: BatchShowsDef | None = Field(default=None, description="what a changed item's row shows of it")
    comment: BatchCommentDef | None = Field(default=None, description="one comment on each item changed")


class ToolDef(Strict):
    name: str
    title: str
    toolset: Identifier | None = Field(
        default=None, description="the toolset (declared under `toolsets`) that `--toolsets` and "
        "the X-MCP-Toolsets header select this tool by; required once the file declares toolsets")
    handler: str | None = Field(default=None, description="async hook; omit to run from `steps`")
    steps: list[StepDef] | None = None
    batch: BatchDef | None = Field(default=None, description="instead of steps: one change applied to "
                                   "many items through another tool (outputs and codes derived)")
    confirm: ConfirmDef | None = Field(default=None, description="declared steps: ask the user first "
                                       "when the client can show a question")
    idempotency: IdempotencyDef | None = None
    operations: list[str] = Field(default_factory=list, description="hooks: the operations they call")
    description: str
    example: dict[str, Any]
    annotations: Annotations
    params: list[Annotated[ParamDef, BeforeValidator(_shared_reference, json_schema_input_type=str | ParamDef)]]
    rules: list[Rule] = Field(default_factory=list)
    output: list[OutputField] = Field(default_factory=list, description="required unless `batch`")
    errors: list[str] | None = Field(default=None, description="default: every code the tool can emit")
    field_map: dict[str, str] = Field(default_factory=dict)
    renamed_from: str | None = Field(
        default=None, description="the tool's previous name: declares the rename, published in the summary"
    )


RECOVERY_VIEWER = "users/get-authenticated"  # recovery's read of the caller's own login


def recovery_only(tool: ToolDef) -> list[str]:
    """Operations the tool calls only to recover a lost answer (not to do its work)."""
    if not (tool.idempotency and tool.idempotency.recover):
        return []
    return [] if RECOVERY_VIEWER in _operations(tool, viewer=False) else [RECOVERY_VIEWER]


def tool_operations(tool: ToolDef) -> list[str]:
    """Every operation a tool calls: its steps', then those its hook declares, without repeats."""
    return _operations(tool, viewer=True)


def _operations(tool: ToolDef, *, viewer: bool) -> list[str]:
    recover = []
    if tool.idempotency and tool.idempotency.recover:  # the lookup also reads the caller's login
        recover = [tool.idempotency.recover.call, *([RECOVERY_VIEWER] if viewer else [])]
    lookups = [s.names_exist.lookup for s in tool.steps or [] if s.names_exist and s.names_exist.lookup]
    lookups += [p.resolve.call for p in tool.params if p.resolve is not None]
    lookups += [s.settle.find for s in tool.steps or [] if s.settle and s.settle.find]
    lookups += [p.resolve.check.call for p in tool.params if p.resolve is not None and p.resolve.check]
    for u in (s.update for s in tool.steps or [] if s.update is not None):
        lookups += [w.call for m in u.sets for w in (m.add, m.remove) if w is not None]
        lookups += [call for t in u.toggles for call in (t.on_true, t.on_false)]
    return list(dict.fromkeys([*(s.call for s in tool.steps or []), *lookups, *recover, *tool.operations]))


BreakingKind = Literal[
    "removed-tool", "renamed-tool", "removed-property", "newly-required", "narrowed-type",
    "narrowed-enum", "narrowed-bound", "removed-output-field", "retyped-output-field",
    "optional-output-field", "removed-error-code", "changed-annotations", "changed-meaning",
]


class BreakingChange(Strict):
    kind: BreakingKind = Field(description="changed-meaning: what a field's values mean changed, "
                               "which no schema shows; published in the capability summary")
    tool: str = Field(description="the tool's name in the committed tools.json")
    field: str | None = Field(default=None, description="dotted path as the report prints it; omit for all")
    reason: str


class StaticResourceDef(Strict):
    uri: str = Field(pattern=r"^[a-z][a-z0-9+.-]*://[^\s{}]+$")
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str
    description: str
    content: Literal["summary", "errors"] = Field(description="a document the generator writes")
    ttl_ms: int = Field(ge=0)
    cache_scope: Literal["public", "private"]


class CompletionDef(Strict):
    call: str = Field(description="a list operation; path parameters come from chosen variables")
    value: str = Field(description="dotted path of the candidate in each row, e.g. owner.login")
    path: dict[str, Any] = Field(default_factory=dict)
    query: dict[str, Any] = Field(default_factory=dict)
    match: dict[str, str] = Field(default_factory=dict, description="variable -> row path it must equal")
    pages: int = Field(default=3, ge=1, le=10, description="pages of 100 rows read at most")


class TemplateDef(Strict):
    uri_template: str = Field(pattern=r"^[a-z][a-z0-9+.-]*://\S+$")
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str
    description: str
    mime_type: str = "application/json"
    tool: str = Field(description="the tool that reaches the same content (its parameters type the "
                      "URI variables, its errors are the read's)")
    handler: str | None = Field(default=None, description="async hook (ctx, variables) -> JSON body; "
                                "omit to read with `steps`")
    steps: list[StepDef] | None = Field(default=None, description="as for tools; the body is `output`")
    output: list[OutputField] = Field(default_factory=list, description="declared reads: the body's fields")
    operations: list[str] = Field(default_factory=list, description="extra operations its hooks call")
    ttl_ms: int = Field(ge=0)
    cache_scope: Literal["public", "private"]
    completions: dict[str, str | CompletionDef] = Field(
        default_factory=dict, description="variable -> a declared listing, or an async hook's name")


class OperationScopes(Strict):
    oauth: list[str] = Field(
        default_factory=list, description="the OAuth scopes the operation needs, every one (GitHub: "
        "classic tokens' and OAuth apps' scopes, for a public repository; private ones need `repo` "
        "too. Forgejo: token scopes, e.g. write:issue); [] = none")
    fine_grained: list[Annotated[str, StringConstraints(pattern=r"^[a-z_]+:(read|write|admin)$")]] = Field(
        default_factory=list, description="GitHub: the fine-grained permissions any one of which "
        "lets a fine-grained token or GitHub App call it, e.g. [issues:write, pull_requests:write] "
        "(the documentation's \"at least one of the following permission sets\"); [] = none")
    user_context: bool = Field(
        default=False, description="it acts on the token's own account (GET /user …), which a "
        "GitHub App installation's token (Actions' GITHUB_TOKEN) does not have")


class OverrideFile(Strict):
    server: ServerSection
    spec_patches: list[SpecPatch] = Field(default_factory=list)
    breaking_changes: list[BreakingChange] = Field(
        default_factory=list, description="breaking changes against the committed tools.json, accepted"
    )
    coverage: Coverage = Field(default_factory=Coverage)
    toolsets: dict[Identifier, str] = Field(
        default_factory=dict, description="toolset name -> one line on what its tools do; every "
        "tool then names its toolset (`all` is reserved: every toolset)")
    error_codes: dict[Identifier, ErrorCodeDef] = Field(
        default_factory=dict, description="extra codes, or new wording for the built-in ones")
    shapes: dict[Identifier, ShapeDef] = Field(default_factory=dict)
    parameters: dict[Identifier, ParamDef] = Field(
        default_factory=dict, description="shared parameters, used by name in tools' params")
    tools: list[ToolDef] = Field(min_length=1)
    on_error: list[OnErrorDef] = Field(
        default_factory=list, description="server-wide error mapping: refines every upstream failure of "
        "every tool (hooks included) before a step's own on_error; `skip` is not allowed here")
    resources: list[StaticResourceDef] = Field(default_factory=list)
    resource_templates: list[TemplateDef] = Field(default_factory=list)
    scopes: dict[str, OperationScopes] = Field(
        default_factory=dict, description="operationId -> what a token needs to call it, from the "
        "forge's documentation of the endpoint; every operation a tool or template calls needs one")


_HINTS = {
    "extra_forbidden": "remove the key or fix its spelling",
    "missing": "add the required key",
    "string_pattern_mismatch": "use the documented form (snake_case names, lower-case packages)",
    "literal_error": "use one of the allowed values",
}
DOCS = "docs/overrides.md"
# where docs/overrides.md describes a key: by top-level key, and for tools by the tool's key
_SECTIONS = {"server": "server", "tools": "tools", "parameters": "parameters", "shapes": "shapes",
             "error_codes": "error-codes", "on_error": "steps", "toolsets": "toolsets",
             "scopes": "scopes",
             **dict.fromkeys(("spec_patches", "coverage", "breaking_changes", "resources",
                              "resource_templates"), "resources-coverage-patches-breaking-changes")}
_TOOL_SECTIONS = {"params": "parameters", "rules": "rules", "steps": "steps", "on_error": "steps",
                  "outputs": "outputs"}


def docs_section(loc: tuple[Any, ...]) -> str:
    """`docs/overrides.md#<section>` for the key at `loc`."""
    section = _SECTIONS.get(str(loc[0]), "a-complete-file") if loc else "a-complete-file"
    if loc[:1] == ("tools",) and len(loc) > 2:
        section = _TOOL_SECTIONS.get(str(loc[2]), section)
    if loc[:2] == ("server", "forge"):
        section = "forge-profiles"
    return f"{DOCS}#{section}"


def _allowed_keys(loc: tuple[Any, ...], root: type[BaseModel] | None = None) -> list[str]:
    """The keys the model accepts at `loc` (a pydantic error location), for "did you mean"."""
    annotation: Any = root or OverrideFile
    for step in loc:
        while get_origin(annotation) in (Union, UnionType, Annotated):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = args[0] if args else annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {f.alias or name: f for name, f in annotation.model_fields.items()}
            field = fields.get(step) if isinstance(step, str) else None
            if field is None:
                return []
            annotation = field.annotation
        elif get_origin(annotation) in (list, dict):
            annotation = get_args(annotation)[-1]
        else:
            return []
    while get_origin(annotation) in (Union, UnionType, Annotated):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [f.alias or name for name, f in annotation.model_fields.items()]
    return []


SCHEMA_ID = "https://github-issues-mcp.invalid/overrides.schema.json"


_root = default_directory()
# pydantic takes ~0.07 s to build the schema, a tenth of an unchanged `make generate`
SCHEMA_STORE = TextStore(_root / "schema" if _root else None, f"pydantic {pydantic.VERSION}\n", ".json")


def schema_text() -> str:
    """The override file's JSON Schema (docs/overrides.schema.json), generated from the models:
    editors validate and complete override files with it. Kept in SCHEMA_STORE (the command line
    flushes it) by the generator's and runtime's sources."""
    inputs = sources_text(Path(__file__).parents[1], REPO_ROOT / "ghmcp_runtime")
    stored = SCHEMA_STORE.get(inputs)
    if stored is None:
        stored = _schema_text()
        SCHEMA_STORE.put(inputs, stored)
    return stored


def _schema_text() -> str:
    schema = OverrideFile.model_json_schema(by_alias=True)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
              "title": "Override file of the github-issues-mcp generator",
              "description": "One MCP server: tools grouped over GitHub's OpenAPI operations. "
                             "See docs/overrides.md.",
              **{k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def resolve_shared(model: OverrideFile, located: Located) -> OverrideFile:
    """Tools' params with every `use` replaced by the shared parameter (explicit keys win);
    a parameter without a name or a description after that is reported."""
    problems: list[Diagnostic] = []
    tools = []
    for i, tool in enumerate(model.tools):
        params = []
        for k, param in enumerate(tool.params):
            loc = ("tools", i, "params", k)
            if param.use is not None:
                shared = model.parameters.get(param.use)
                if shared is None:
                    guess = closest(param.use, list(model.parameters))
                    problems.append(Diagnostic(
                        Level.ERROR, located.where(loc), f"unknown shared parameter {param.use!r}",
                        f"did you mean {guess!r}?" if guess else "declare it under the top-level `parameters`"))
                    continue
                given = {key: getattr(param, key) for key in param.model_fields_set if key != "use"}
                param = shared.model_copy(update={"name": shared.name or param.use, **given})
            for key in ("name", "description"):
                if getattr(param, key) is None:
                    problems.append(Diagnostic(Level.ERROR, located.where(loc),
                                               f"parameter {k} of {tool.name} has no {key}",
                                               f"add `{key}:` (or `use:` a shared parameter)"))
            params.append(param)
        tools.append(tool.model_copy(update={"params": params}))
    if problems:
        raise DiagnosticError(problems)
    return model.model_copy(update={"tools": tools})


M = TypeVar("M", bound=BaseModel)


def validate_located(model: type[M], located: Located) -> M:
    """`located.data` as `model`; every validation error located, with a hint (DiagnosticError)."""
    try:
        return model.model_validate(located.data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            where = located.where(loc)
            dotted = ".".join(str(p) for p in loc) or "<root>"
            kind = err["type"]
            hint = f"{_HINTS[kind]}; see {docs_section(loc)}" if kind in _HINTS else f"see {docs_section(loc)}"
            if kind == "extra_forbidden":
                message = f"unknown key {loc[-1]!r} at {dotted}"
                guess = closest(str(loc[-1]), _allowed_keys(loc[:-1], model))
                if guess:
                    hint = f"did you mean {guess!r}? Otherwise {hint}"
            elif kind == "missing":
                message = f"missing required key {dotted}"
            else:
                message = f"{dotted}: {err['msg']}"
            problems.append(Diagnostic(Level.ERROR, where, message, hint))
        raise DiagnosticError(sorted(problems, key=lambda d: d.where)) from None


def parse_overrides(text: str, file: str) -> tuple[OverrideFile, Located]:
    located = load_yaml(text, file)
    model = validate_located(OverrideFile, located)
    return resolve_shared(model, located), located


def read_overrides(path: Path, display: str) -> tuple[OverrideFile, Located]:
    return parse_overrides(path.read_text(encoding="utf-8"), display)
