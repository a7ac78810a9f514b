"""The MCP server: one agent's concepts as tools and resources, with the official `mcp` SDK.

Tools (what a model calls), each with described, bounded parameters and annotations:

- ``search_knowledge(query, top_k=5)``: the best-matching concepts, scored (read-only);
- ``load_knowledge(name)``: one concept's whole markdown record (read-only);
- ``list_conflicts()``: the concepts holding contradicting reports (read-only);
- ``propose_concept(name, description, type, body, evidence=[])``: learn one concept,
  through the same gates, redaction, trust gate and consolidation as extraction
  (provenance ``observed``). `evidence` is the conversation it comes from, quoted: a rule
  only the customer's messages state is held in quarantine (outcome ``quarantined``), as
  it is when extraction proposes it. A proposal a gate refuses is an error result
  (``isError``) saying why in the caller's words; nothing is written then.

The source a proposal records is the connection's session: one per client connection
(its ``mcp-session-id`` over HTTP, the stdio session otherwise), so two clients never
count as one conversation.

Resources: every concept as ``knowledge://<agent>/<name>`` (``text/markdown``), listed by
``resources/list`` and read through the template of the same shape.

Everything a model reads here passes the retriever's one quarantine filter
(`insika_knowledge.retrieve`): a concept held in quarantine is never a hit, never loaded
(it answers as an unknown name) and never listed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import uuid
from typing import Annotated, Any, Final, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from insika_knowledge import __version__
from insika_knowledge.candidate import MODEL_BODY_MAX
from insika_knowledge.concept import DESCRIPTION_MAX
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import InsikaError, NotFound
from insika_knowledge.escaping import prompt_line
from insika_knowledge.ids import DEFAULT_TENANT, check_agent, check_tenant
from insika_knowledge.memory import HitSummary, Memory

SCHEME: Final = "knowledge"
MARKDOWN: Final = "text/markdown"
INSTRUCTIONS: Final = (
    "Learned knowledge of agent {agent}: concepts (facts, policies, procedures, objections) "
    "learned from earlier conversations or written by the business. Search before answering a question they "
    "may cover, "
    "load a concept when its summary is not enough. provenance=observed is past practice, "
    "never a guarantee; only provenance=policy is official; status=conflict means "
    "contradicting reports: do not rely on it."
)


#: What a tool reads and never writes; what ``propose_concept`` does.
READ_ONLY: Final = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)
PROPOSING: Final = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)
ConceptType = Literal["fact", "entity", "procedure", "policy", "objection"]
#: ``propose_concept``'s evidence: the most messages, and the most characters of each (the
#: messages that state one concept; unbounded, 48 MB of them took one call 294 s).
EVIDENCE_MESSAGES: Final = 50
EVIDENCE_CHARS: Final = 8000


def _model_facing(hit: HitSummary) -> HitSummary:
    """`hit` with its description prompt-safe (`escaping.prompt_line`), as every text a tool
    hands the model: a stored description can neither close nor forge a prompt tag.
    """
    return dataclasses.replace(hit, description=prompt_line(hit.description))


def tool_text(text: str) -> str:
    """A tool's description as the model reads it: `text` without its source indentation."""
    return inspect.cleandoc(text)


#: Hex digits -> letters after "f": a source id spells its 16 symbols in letters only.
_LETTERS: Final = str.maketrans("0123456789", "ghijklmnop")


def session_source(hex_digest: str) -> str:
    """The session a proposal's sighting counts for: ``mcp-`` and 12 letters ``a``-``p``
    spelling the first 12 hex digits of `hex_digest` (a digit written as a letter: a run of
    eight digits would read as a phone number and be pseudonymised when stored,
    `privacy.pseudonyms.pseudonymous`).
    """
    return "mcp-" + hex_digest[:12].lower().translate(_LETTERS)


class SearchOut(BaseModel):
    """``search_knowledge``'s answer: hits, best first, without their bodies (``load_knowledge``
    reads one).
    """

    hits: list[HitSummary]


class ConflictOut(BaseModel):
    """A concept awaiting a person's decision."""

    name: str
    description: str
    confidence: float
    provenance: str


class ConflictsOut(BaseModel):
    """``list_conflicts``' answer."""

    conflicts: list[ConflictOut]


class Said(BaseModel):
    """One message of the conversation a proposed concept comes from, quoted verbatim.

    Attributes:
        role: who said it: ``user`` (the customer), ``assistant`` (the agent), ``tool``
            (a tool result) or ``system`` (the business's instructions).
        content: what was said.
    """

    role: Literal["user", "assistant", "tool", "system"] = Field(
        description="Who said it: user (the customer), assistant (you, the agent), tool (a tool result), "
                    "system (your instructions).")
    content: str = Field(max_length=EVIDENCE_CHARS, description="What was said, verbatim.")


class ProposalOut(BaseModel):
    """``propose_concept``'s answer.

    Attributes:
        name: the concept's name as stored (normalised), None when a gate refused it.
        outcome: learned, confirmed, merged, conflict, replayed, quarantined (held for a
            person: only the customer said it), possible_duplicate, unsupported (a live
            rule only the customer repeated: nothing counted); or ``dropped``.
        dropped: the gate that refused it (reason -> 1), empty otherwise.
        redacted: personal data replaced (kind -> count).
        why: why it was held, in words: a quarantine ("quarantined: no message supported
            it, ..."), a conflict ("conflict: it contradicts a policy, ...") or a possible
            duplicate ("possible_duplicate: it closely matches prazo (overlap 0.83) but
            states other values: ..."); "" otherwise.
    """

    name: str | None
    outcome: str
    dropped: dict[str, int]
    redacted: dict[str, int]
    why: str = ""


def _argument_problem(error: Any) -> str:
    """One argument a schema refused (a pydantic error), in words: where, what, the value given."""
    where = ".".join(str(part) for part in error.get("loc", ())) or "the arguments"
    said = str(error.get("msg", "is not valid"))
    given = error.get("input")
    if error.get("type") == "missing":
        return f"{where} is required"
    shown = f"{given[:40]!r}..." if isinstance(given, str) and len(given) > 40 else repr(given)[:60]
    return f"{where}: {said[:1].lower()}{said[1:]} (got {shown})"


def uri(agent: str, name: str) -> str:
    """The resource URI of one concept, ``knowledge://<agent>/<name>``."""
    return f"{SCHEME}://{agent}/{name}"


class KnowledgeServer(MCPServer[Any]):
    """An `MCPServer` whose resource list is the agent's concepts, read on every request.

    Args:
        memory: the `Memory` to serve from (the caller closes it).
        agent: the agent id.
        tenant: the tenant.
        config: the agent's settings (``types`` for proposals, ``top_k`` cap, model).
        session_id: the source recorded on every proposed concept (None: one per client
            connection, ``mcp-`` and 12 hex digits).

    Raises:
        InvalidName: the agent or tenant name is invalid.
    """

    def __init__(self, memory: Memory, agent: str, *, tenant: str = DEFAULT_TENANT,
                 config: KnowledgeConfig | None = None, session_id: str | None = None):
        check_agent(agent)
        check_tenant(tenant)  # its database is created by the first proposal, never by serving reads
        super().__init__(f"insika-knowledge ({agent})", version=__version__,
                         instructions=INSTRUCTIONS.format(agent=agent), log_level="WARNING")
        self.memory = memory
        self.agent = agent
        self.tenant = tenant
        self.config = config or KnowledgeConfig()
        self.session_id = session_id
        self._register()

    def source(self, ctx: Context | None, proposal: str = "") -> str:
        """The session a proposal from this request is recorded under: the fixed one (the
        command's, one per stdio server process: its one client), else the client's
        ``mcp-session-id`` over HTTP, else one per distinct `proposal` (its claim and
        evidence as one text): a client that sends no session (the SDK's 2.x protocol
        makes every request its own exchange) proposing the same thing again counts once.
        """
        if self.session_id is not None:
            return self.session_id
        headers = ctx.headers if ctx is not None else None
        sent = (headers or {}).get("mcp-session-id")
        if not sent:
            sent = "proposal\x1e" + proposal if proposal else uuid.uuid4().hex
        return session_source(hashlib.sha256(sent.encode("utf-8", "replace")).hexdigest())

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        """`MCPServer.call_tool`, with arguments that do not fit a tool's schema said in the
        caller's words ("search_knowledge: top_k must be at most 50 (got 500)"), not as
        pydantic's report (its type codes and a link to its documentation).

        Raises:
            ToolError: the tool is unknown, its arguments do not fit (an argument it does not
                take included: "load_knowledge takes only name; unknown argument(s): x", as
                the engine's handler says it), or it refused.
        """
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            takes = set((tool.parameters or {}).get("properties", {}))
            unknown = sorted(set(arguments or {}) - takes)
            if unknown:
                said = f"takes only {', '.join(sorted(takes))}" if takes else "takes no argument"
                raise ToolError(f"{name} {said}; unknown argument(s): {', '.join(u[:40] for u in unknown[:5])}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(f"{name}: {'; '.join(_argument_problem(e) for e in exc.__cause__.errors())}") from None

    async def list_resources(self) -> list[Resource]:
        """Every concept of the agent, by name (those held in quarantine left out)."""
        return [
            Resource(uri=uri(self.agent, c.name), name=c.name,
                     description=prompt_line(c.description), mime_type=MARKDOWN)
            for c in self.memory.concepts(agent=self.agent, tenant=self.tenant, held=False)
        ]

    def _load(self, name: str) -> str:
        """One concept's whole record, as the model's ``load_knowledge`` gives it.

        Raises:
            NotFound: no such concept, or one held in quarantine (the same message).
        """
        if not self.memory.has_tenant(self.tenant):  # reading creates no database
            raise NotFound(f"no concept {name!r}: tenant {self.tenant!r} has none yet")
        result = self.memory.retriever(self.tenant).load_knowledge(self.agent, name, max_chars=None)
        if "error" in result:
            raise NotFound(str(result["error"]))
        return str(result["markdown"])

    def _register(self) -> None:
        memory, agent, tenant, config = self.memory, self.agent, self.tenant, self.config

        @self.tool(annotations=READ_ONLY, description=tool_text("""
            Search this agent's learned concepts for the ones relevant to a question.

            Returns up to top_k hits, best first: name, one-line description, type, score
            (higher is better), confidence (0-1), provenance (observed = past practice,
            never a guarantee; policy = official) and status (ok, or conflict =
            contradicting reports: do not rely on it). Load a concept for its full text.
            """))
        def search_knowledge(
            query: Annotated[str, Field(min_length=1, max_length=2000,
                                        description="The customer's question, or a few keywords.")],
            top_k: Annotated[int, Field(ge=1, le=50, description="How many concepts at most (1-50).")] = 5,
        ) -> SearchOut:
            try:
                hits = memory.search(query, agent=agent, top_k=top_k, tenant=tenant, index=config.index)
            except InsikaError as exc:
                raise ToolError(f"search failed: {exc}") from None
            return SearchOut(hits=[_model_facing(h.summary()) for h in hits])

        @self.tool(annotations=READ_ONLY, description=tool_text("""
            Load the full markdown record of one concept, by its exact name (as a search hit
            or the <knowledge> block names it). An unknown name answers with close names.
            """))
        def load_knowledge(
            name: Annotated[str, Field(min_length=1, max_length=200,
                                       description="The concept's exact name, e.g. 'cep-13-campinas'.")],
        ) -> str:
            try:
                return self._load(name)
            except InsikaError as exc:
                raise ToolError(str(exc)) from None

        @self.tool(annotations=READ_ONLY, description=tool_text("""
            List the concepts holding contradicting reports. A person must decide which
            claim is true: do not rely on them meanwhile.
            """))
        def list_conflicts() -> ConflictsOut:
            return ConflictsOut(conflicts=[
                ConflictOut(name=c.name, description=prompt_line(c.description),
                            confidence=c.confidence, provenance=c.provenance)
                for c in memory.conflicts(agent=agent, tenant=tenant, held=False)
            ])

        @self.tool(annotations=PROPOSING, description=tool_text(f"""
            Propose a durable concept learned in this conversation, to remember for later ones.

            It is checked, personal data is redacted, and a repeat of a known concept
            confirms, merges with or contradicts it. A rule (a price, a deadline, a benefit,
            an instruction) that only the customer stated is held in quarantine until a
            person approves it (outcome quarantined). A proposal that fails a check is an
            error saying why; nothing is written then. Never put customer details in it.
            Types this agent learns: {", ".join(config.types)}.
            """))
        def propose_concept(
            name: Annotated[str, Field(min_length=1, max_length=120,
                                       description="A short kebab-case name, e.g. 'frete-gratis-acima-199'.")],
            description: Annotated[str, Field(min_length=1, max_length=DESCRIPTION_MAX,
                                              description="One line saying what the concept states.")],
            type: Annotated[ConceptType, Field(description="fact, entity, procedure, policy or objection.")],
            body: Annotated[str, Field(min_length=1, max_length=MODEL_BODY_MAX,
                                       description="The full statement in markdown; link other concepts "
                                                   "as [[name]].")],
            evidence: Annotated[list[Said] | None, Field(
                max_length=EVIDENCE_MESSAGES,
                description=f"The messages of this conversation that state it, verbatim, oldest first "
                            f"(at most {EVIDENCE_MESSAGES}, each at most {EVIDENCE_CHARS} characters).")] = None,
            ctx: Context | None = None,
        ) -> ProposalOut:
            item = {"name": name, "description": description, "type": type, "body": body}
            said = [{"role": m.role, "content": m.content} for m in evidence or ()]
            try:
                proposal = json.dumps([item, said], ensure_ascii=False, sort_keys=True)
                report = memory.propose(item, agent=agent, session_id=self.source(ctx, proposal), tenant=tenant,
                                        config=config, messages=said)
            except InsikaError as exc:
                raise ToolError(f"not learned: {exc}") from None
            if report.outcome != "ok":
                raise ToolError(f"not learned: {report.outcome.replace('_', ' ')}"
                                + (f" ({report.detail})" if report.detail else ""))
            if not report.results:  # "candidate 0: invalid: name: cannot make a concept name..."
                said_why = report.why[0].split(": ", 1)[-1] if report.why else "refused by a gate"
                raise ToolError(f"not learned: {said_why}")
            stored, outcome = report.results[0]
            held = next((w.split(": ", 1)[1] for w in report.why if w.startswith(f"{stored}: ")), "")
            return ProposalOut(name=stored, outcome=outcome, dropped={}, redacted=dict(report.redacted),
                               why=prompt_line(held))

        @self.resource(f"{SCHEME}://{agent}/{{name}}", name="concept", mime_type=MARKDOWN,
                       description=f"One learned concept of agent {agent}, as markdown.")
        def concept(name: str) -> str:
            try:
                return self._load(name)
            except NotFound as exc:
                raise ResourceNotFoundError(str(exc)) from None
