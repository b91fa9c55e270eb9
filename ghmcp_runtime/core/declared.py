"""Declarations of tools that run without a hook: steps, error mappings, recipes, outputs.

The generator writes these from the override file (keyword arguments, non-default values only);
`ghmcp_runtime.engine.runner.declared` turns one into a tool handler. Every string that names a value is a
*reference template*: `{name}` is a tool argument (after defaults and transforms), `{step.a.b}` a
field of an earlier step's response body, `{step}` the whole body, `{name|filter}` passes the value
through a filter of `ghmcp_runtime.core.transforms`. A template that is exactly one reference keeps the
value's JSON type; otherwise the values are formatted into the text. A reference to something
absent (an omitted argument, a skipped step) drops the key it fills.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import field as _field
from typing import Any, Literal

from ghmcp_runtime.core.operation import Operation

Template = Any  # a reference template (str) or a constant JSON value


@dataclass(frozen=True, slots=True, kw_only=True)
class Condition:
    """A step runs only when `param` is present (present=True), absent (False), or equals `equals`;
    or, with `step`, when that earlier step's outcome (`ghmcp_runtime.engine.outcomes`) has one of
    `status`, the error `code` (a failure on_error skipped) and the `empty`-ness given
    (present=False negates)."""

    param: str = ""
    present: bool = True
    equals: Any = None
    step: str | None = None
    status: tuple[int, ...] = ()
    code: str | None = None
    empty: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """Which upstream failures an `OnError` handles; every given key must match."""

    status: int | None = None  # GitHub's HTTP status
    github_code: str | None = None  # errors[0].code of a 422 (e.g. already_exists)
    code: str | None = None  # the code the runtime's generic mapping chose (e.g. label_not_found)
    field: str | None = None  # the parameter the failure names (details.field), e.g. a 422's field
    message_contains: str | None = None  # GitHub's `message`, a case-insensitive substring
    message_matches: str | None = None  # GitHub's `message`, a regular expression (re.search)
    method: tuple[str, ...] = ()  # the failed request's HTTP method is one of these


@dataclass(frozen=True, slots=True, kw_only=True)
class Repair:
    next_step: str
    tool: str
    arguments: Mapping[str, Template] = field(default_factory=dict)
    alternative: str | None = None
    # the forge toolset that holds `tool` when another override file declares it; a surface
    # without the tool leaves the repair out (serving/surface.py)
    toolset: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorSpec:
    """The envelope to answer with; unset keys keep what the failure already carried."""

    code: str | None = None
    message: str | None = None
    field: str | None = None
    reason: str | None = None
    repair: Repair | None = None
    # details.<name> from a template (a value GitHub answered, e.g. the URL of what was refused)
    details: Mapping[str, str] = _field(default_factory=dict)  # `field` is a member here


@dataclass(frozen=True, slots=True, kw_only=True)
class OnError:
    when: Match
    error: ErrorSpec = field(default_factory=ErrorSpec)
    skip: bool = False  # the step produced nothing (outputs read from it are empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reject:
    """Refuse a successful response whose body has `present` set (e.g. an issue that is a PR)."""

    present: str
    error: ErrorSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class Paginate:
    """Page numbers carried in an HMAC cursor argument; `has_more` from a Link header or a total.

    Resources page by URI instead: `page_param` names the variable holding the page number
    (default 1), `size_param` an optional page size (at most page_size), and the body gets `page`
    and, when more exist, `next`: `next_uri` plus the URL-encoded `next_query`, whose templates
    also read `{next_page}` and `{page_size}`."""

    cursor: str | None = None  # the tool parameter that carries the cursor
    page_size: int = 30
    style: Literal["link", "total_count"] = "link"
    items: str | None = None  # where the rows are in the body; None: the body is the list
    has_more: str = "has_more"  # output field names
    next_cursor: str = "next_cursor"
    page_param: str | None = None
    size_param: str | None = None
    next_uri: Template = None
    next_query: Mapping[str, Template] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compare:
    """Partial update: send only body fields whose value differs from an earlier read."""

    against: str  # step id of the read
    fields: Mapping[str, str]  # body field -> dotted path in the read's body
    normalize: Mapping[str, str] = field(default_factory=dict)  # body field -> filter, both sides
    changed: str = "changed_fields"  # output field listing the changed parameters
    names: Mapping[str, str] = field(default_factory=dict)  # body field -> name in `changed`
    # body fields sent with every change, never compared or reported (Forgejo resets an
    # `is_archived` a PATCH leaves out: the read's own value is carried along)
    carry: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Settle:
    """A partial update (a write with `Compare`) judged by re-reading the resource where the write
    leaves it: the `against` read again, `path` overriding its path parameters (a rename: the new
    name; an override whose template reads something absent keeps the read's own value).

    * The write's answer is lost: the re-read shows the same resource (`id`) with every field sent
      -> the write succeeded; with none of them changed -> it was not applied; else unknown.
    * The `against` read finds nothing (its not-found code) and an override moves the path: a
      resource there showing every requested field already is what the call asks for (an earlier
      call whose answer was lost renamed it), so the write is skipped; otherwise the not-found error.
    * On a delete (no `Compare`), `against` names the read: a lost answer with the re-read finding
      nothing (its not-found code) -> the delete took effect; the same resource -> not applied.
      When the read addresses the resource by a name someone else can change, `find` lists the
      resources (`find_path`): the delete took effect only if no row has the resource's `id`
      (a rename moved it: not applied); more than `pages` pages -> unknown.
    * On a create, `against` names the earlier `Absent` listing that found no row like the one
      asked for: re-read, exactly one such row now is what the write made (applied); none -> not
      applied; several -> unknown.
    """

    path: Mapping[str, Template] = field(default_factory=dict)
    against: str | None = None  # a delete's read; a partial update re-reads its compare read
    find: Operation | None = None
    find_path: Mapping[str, Template] = field(default_factory=dict)
    pages: int = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Guard:
    """Safe delete: count what still uses the resource; refuse unless the count is known to be 0."""

    count: tuple[str, ...] = ()  # dotted paths in this step's body, summed
    total: bool = False  # count the listing's total (the forge's total-count header) as well
    refuse: ErrorSpec  # count > 0; `{count}` is available to its templates
    when: Condition | None = None  # the guard applies only then (e.g. delete_mode safe)
    unknown: ErrorSpec | None = None  # the count could not be obtained (this step failed)
    incomplete: str | None = None  # body flag meaning the count may be partial (search)
    unknown_field: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Absent:
    """A value that must not be taken yet: the step's operation lists rows (every page, at most
    `pages`), and a row whose `match` fields equal the rendered templates refuses the call."""

    match: Mapping[str, Template]  # row field -> template
    refuse: ErrorSpec
    pages: int = 10
    # row field -> template naming the resource being changed: a row equal on these is that
    # resource (an edit keeping its own name), not another one holding the value
    other_than: Mapping[str, Template] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class NamesExist:
    """Names that must exist: the step's operation lists the catalog (ghmcp_runtime.engine.catalog);
    its result is, per parameter, the exact catalog names in the order given."""

    params: tuple[str, ...]
    code: str  # refused with this code, naming every missing index, before anything is written
    kind: str = "label"  # the thing named, for the message
    lookup: Operation | None = None  # reads one entry by {name}: names past the first page
    repair: Repair | None = None
    key: str = "name"  # the catalog entry's field holding the name
    lookup_param: str = "name"  # the lookup's path parameter naming the entry
    absent: str = "do not exist in the repository"  # what the message says of the missing names


@dataclass(frozen=True, slots=True, kw_only=True)
class Verify:
    """After a write: body fields GitHub accepted but its answer does not show (e.g. assignees
    a token without push access cannot set) are reported, never claimed as done."""

    fields: Mapping[str, tuple[str, ...]]  # body field -> path in the response ("[]" maps a list)
    normalize: Mapping[str, str] = field(default_factory=dict)  # body field -> transform, both sides
    names: Mapping[str, str] = field(default_factory=dict)  # body field -> parameter reported
    ignored: str = "ignored_fields"  # output listing them (absent when none)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stored:
    """After a write: whether GitHub holds each text body field exactly as sent
    (ghmcp_runtime.engine.stored), compared with the write's answer or, when a partial update sent
    nothing, with its compare read. Fills the outputs `stored_as_sent` and `altered_fields`."""

    fields: Mapping[str, tuple[str, ...]]  # body field -> path in the answer
    names: Mapping[str, str] = field(default_factory=dict)  # body field -> parameter reported


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolve:
    """A parameter that takes a name as well as an id (ghmcp_runtime.engine.resolve): a string value is
    looked up in the rows of `operation` (a listing read 100 rows a page, at most `pages` pages)
    by the row field `match` — exactly, else ignoring ASCII case when exactly one row matches so —
    and replaced by that row's `value` before any step runs. Any other value is kept. When no row
    matches, `unknown` is raised with `details.choices`: the first `choices` rows' `match`.
    With `each`, the parameter is a list and every string in it is a name: all of them are looked
    up in one walk of the listing, and the names no row has are refused together
    (`details.unknown`: their indexes, `add_labels[1]`)."""

    param: str
    operation: Operation
    match: tuple[str, ...]  # row path compared with the string
    value: tuple[str, ...]  # row path of what replaces it
    unknown: ErrorSpec  # no row matches (its field defaults to `param`)
    path: Mapping[str, Template] = field(default_factory=dict)
    query: Mapping[str, Template] = field(default_factory=dict)
    choices: int = 20
    pages: int = 10
    check: Operation | None = None  # reads one entry by id: an id it does not find is refused
    check_path: Mapping[str, Template] = field(default_factory=dict)
    check_unknown: ErrorSpec | None = None  # the id is not found (its field defaults to `param`)
    keep: tuple[str, ...] = ()  # words kept as they are, never looked up (e.g. none, any)
    each: bool = False  # the parameter is a list of names (and ids)


# -- update plan (ghmcp_runtime.engine.update_plan) ---------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """How the resource shows one value: a path in its JSON (`[]` maps a list, compared as a set),
    read through a transform on both sides (`trim`, `fold`); null, "" and false count alike."""

    path: tuple[str, ...]
    normalize: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SentWith:
    """Body field `follow` goes with `lead`, and the forge reads it only with it: whenever `lead`
    is sent, `follow` is too (the caller's value, else `default[lead's value]`); a changed `follow`
    goes with the caller's `lead`, and without one it is ignored (not sent). `stores[v]`: with the
    lead at `v` the forge stores that follow whatever was sent (reopening stores `reopened`), so
    the follow changes only when the lead does."""

    follow: str
    lead: str
    default: Mapping[str, Any] = field(default_factory=dict)
    stores: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberWrite:
    """Adding or removing members of a set: one request per member (`each`: the path variable
    naming it) or one for all (`body`: the body field listing them)."""

    param: str
    operation: Operation
    each: str | None = None
    body: str | None = None
    answer: tuple[str, ...] | None = None  # where the answer holds the whole list (): the body
    done: str | None = None  # a 404 mapped to this code: the member was already absent
    path: Mapping[str, Template] = field(default_factory=dict)  # the other path variables


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberSet:
    """add/remove parameters against a list field of the resource (the `shows` entry `view`,
    `list[].key`): only members missing (present) are written; `fold` in the view's normalize
    matches members ignoring ASCII case."""

    view: str
    kind: str  # what a member is called in messages (label, login)
    add: MemberWrite | None = None
    remove: MemberWrite | None = None
    max: int | None = None  # the forge keeps at most this many members and ignores adds past it


@dataclass(frozen=True, slots=True, kw_only=True)
class Toggle:
    """A boolean parameter written by one of two requests (`on`, `off`); `reason` is a parameter
    sent in `on`'s body under its own name and shown by the `shows` entry of that name."""

    param: str
    on: Operation
    off: Operation
    reason: str | None = None
    on_path: Mapping[str, Template] = field(default_factory=dict)
    off_path: Mapping[str, Template] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionCheck:
    """`param` carries a version of the resource (`shape`'s declared version): a mismatch is
    `conflict` before any write, and a write's answer showing another writer's change stops the
    writes with `conflict` naming those fields."""

    param: str
    shape: str
    repair: Repair | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdatePlan:
    """A partial update of one resource read by the step `against`, as waves of requests judged
    by what the forge shows (ghmcp_runtime.engine.update_plan). The step carrying it is the
    PATCH of the resource's own fields: its body's parameters, only those that differ. `shows` is
    ordered: changed and ignored fields follow it (a set's add/remove parameters after its view)."""

    against: str
    noun: str  # the resource, in messages
    shows: Mapping[str, Shown]
    sent_with: tuple[SentWith, ...] = ()
    sets: tuple[MemberSet, ...] = ()
    toggles: tuple[Toggle, ...] = ()
    version: VersionCheck | None = None
    exact: tuple[str, ...] = ()  # names_exist steps whose exact names replace their parameters' values
    changed: str = "changed_fields"  # output listing the fields that changed
    ignored: str = "ignored_fields"  # output listing the parameters the forge ignored (absent when none)


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    id: str
    operation: Operation
    path: Mapping[str, Template] = field(default_factory=dict)
    query: Mapping[str, Template] = field(default_factory=dict)
    body: Mapping[str, Template] = field(default_factory=dict)
    when: tuple[Condition, ...] = ()
    after: tuple[str, ...] = ()  # steps that must finish first (the generator derives them)
    on_error: tuple[OnError, ...] = ()
    reject: tuple[Reject, ...] = ()
    paginate: Paginate | None = None
    compare: Compare | None = None
    guard: Guard | None = None
    names_exist: NamesExist | None = None
    absent: Absent | None = None
    verify: Verify | None = None
    settle: Settle | None = None  # a write with `compare`, a delete, or a create after `absent`
    stored: Stored | None = None  # on a write that sends text
    update: UpdatePlan | None = None  # this write is the PATCH of an update plan
    # body field -> what is sent when its parameter is null (Forgejo clears a milestone with 0)
    null_as: Mapping[str, Any] = field(default_factory=dict)
    # query field -> separator: its template is a list of parts, each left out when it reads
    # something absent or null, the rest joined (optional search qualifiers)
    join: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """One field of the success payload."""

    name: str
    value: Template = None  # a reference template; or, with `shape`, the steps to project
    shape: str | None = None
    each: bool = False  # a list of `shape` rows gathered from every step in `sources`
    sources: tuple[str, ...] = ()  # with `shape`: the first step that produced a body wins
    version_of: str | None = None  # the shape whose declared version of the first source's body
    exclude: str | None = None  # rows with this field set are not rows (e.g. pull_request)
    detail: str | None = None  # a fixed row density, instead of the declaration's `detail`
    include: tuple[str, ...] = ()  # full-density fields added to summary rows
    omit: tuple[str, ...] = ()  # projected fields left out (e.g. an index carries no previews)
    when_more: str | None = None  # present only while that paginated step has more
    items_at: tuple[str, ...] = ()  # with `each`: where the rows are inside each source's body
    true_when: Condition | None = None  # a boolean: does the condition hold once the steps ran?
    local: Local | None = None  # shaped rows of another repository lose these fields (null)


@dataclass(frozen=True, slots=True, kw_only=True)
class Local:
    """Rows that may belong to another repository than the call's (`owner`/`repo` parameters):
    `repository` is the row's path to its repository's API URL; on a row of another repository
    the `fields` are null (its issue number would name another issue of this one)."""

    repository: tuple[str, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Recover:
    """Find what a write created when its response was lost (ghmcp_runtime.engine.recovery): the one row
    of `operation` by the caller's own login, created since the first attempt, whose `match`
    fields are exactly the text sent."""

    operation: Operation
    path: Mapping[str, Template] = field(default_factory=dict)
    query: Mapping[str, Template] = field(default_factory=dict)
    match: Mapping[str, Template] = field(default_factory=dict)
    newest_first: bool = False  # rows come newest-created first: stop at the window's start
    author_param: str | None = None  # query parameter filtering by author (issues: creator)
    author_field: str = "user"  # the row field holding the author (milestones: creator)
    since_param: str | None = "since"  # query parameter filtering by update time; None: none
    repair: Repair | None = None  # where to look when the outcome stays unknown
    created_field: str = "created_at"  # the row field saying when it was made


@dataclass(frozen=True, slots=True, kw_only=True)
class Idempotency:
    """Repeats of a key (per caller, tool and `scope` arguments) return the first result."""

    key: str  # the parameter carrying the key
    write: str  # the step whose lost response `recover` finds
    scope: tuple[str, ...] = ()
    recover: Recover | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Completion:
    """Candidates for a resource-template variable: the `value` of each row of `operation` (at
    most `pages` pages of 100), keeping rows whose `match` paths equal variables already chosen
    (ignoring case). Path templates read the chosen variables; one missing means no candidates."""

    operation: Operation
    value: tuple[str, ...]
    path: Mapping[str, Template] = field(default_factory=dict)
    query: Mapping[str, Template] = field(default_factory=dict)
    match: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # variable -> row path
    pages: int = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Confirm:
    """A destructive call asks the user first, through the protocol, when the client can show a
    question (ghmcp_runtime.engine.confirm); a client that cannot keeps the explicit-parameter path.
    `message` reads parameters and, in a batch, `{count}` and `{items}`."""

    message: Template
    when: tuple[Condition, ...] = ()  # asked only when every condition holds
    over: int = 0  # a batch asks only for more items than this


@dataclass(frozen=True, slots=True, kw_only=True)
class Declaration:
    steps: tuple[Step, ...]
    output: tuple[Output, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)  # parameter defaults
    transforms: Mapping[str, str] = field(default_factory=dict)  # parameter -> transform
    detail: str | None = None  # the parameter choosing the row density, if any
    idempotency: Idempotency | None = None
    resolve: tuple[Resolve, ...] = ()  # parameters taking a name, resolved beside the first steps
    confirm: Confirm | None = None  # asked before any step runs

    def step(self, step_id: str) -> Step:
        """The step with id `step_id` (the generator checks every reference)."""
        return next(s for s in self.steps if s.id == step_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchSource:
    """Items a paged listing tool finds: the caller passes its filters in the object parameter
    `param`; `fixed` gives its other arguments (templates over the batch's parameters)."""

    tool: str
    param: str
    rows: str  # the listing's output holding the rows
    item_field: str  # the row field naming an item
    fixed: Mapping[str, Template] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchComment:
    """One comment posted on each item a batch changes, through the single-item tool `tool`
    (its validation, idempotency and answer): this tool's parameter `param` is the text, which
    fills the tool's `body`; `key` is the tool's idempotency-key parameter, filled per item."""

    param: str
    tool: str
    body: str
    arguments: Mapping[str, Template] = field(default_factory=dict)
    key: str | None = None
    id: tuple[str, ...] = ()  # path in the tool's answer of the id a row shows as `comment_id`


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    """One change applied to many items, each by a call of the single-item tool `each`
    (ghmcp_runtime.engine.batch): `item` is the parameter an item fills, `arguments` the others
    (templates over this tool's parameters). Items come from the list parameter `items` when it
    is passed, else from `source`; `zip` pairs a list parameter with `items` by position."""

    each: str
    item: str
    arguments: Mapping[str, Template]
    items: str | None = None
    source: BatchSource | None = None
    zip: Mapping[str, str] = field(default_factory=dict)  # list parameter -> each's parameter
    changed: str = "changed_fields"  # each's output naming what it changed
    ignored: str | None = None  # each's output naming what GitHub ignored, if it has one
    dry_run: str | None = None  # the boolean parameter asking for a dry run
    cursor: str = "cursor"
    key: str | None = None  # the idempotency-key parameter
    scope: tuple[str, ...] = ()  # parameters the key is scoped to (with the caller and the tool)
    max_items: int = 100  # items per call; next_cursor goes on
    confirm: Confirm | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    transforms: Mapping[str, str] = field(default_factory=dict)
    resolve: tuple[Resolve, ...] = ()  # resolved once, for every item
    # a changed item's row also shows these fields of the object `shows_from` of each's answer
    shows_from: str | None = None
    shows: tuple[str, ...] = ()
    comment: BatchComment | None = None
