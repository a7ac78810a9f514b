"""The MCP server: one agent's concepts as tools and resources, with the official `mcp` SDK.

Tools (what a model calls):

- ``search_knowledge(query, top_k=5)``: the best-matching concepts, scored;
- ``load_knowledge(name)``: one concept's whole markdown record;
- ``list_conflicts()``: the concepts holding contradicting reports;
- ``propose_concept(name, description, type, body, evidence=[])``: learn one concept,
  through the same gates, redaction, trust gate and consolidation as extraction
  (provenance ``observed``; the source is this server's session id). `evidence` is the
  conversation it comes from, quoted: a rule only the customer's messages state is held in
  quarantine (outcome ``quarantined``), as it is when extraction proposes it.

Resources: every concept as ``knowledge://<agent>/<name>`` (``text/markdown``), listed by
``resources/list`` and read through the template of the same shape.

Everything a model reads here passes the retriever's one quarantine filter
(`insika_knowledge.retrieve`): a concept held in quarantine is never a hit, never loaded
(it answers as an unknown name) and never listed.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource
from pydantic import BaseModel

from insika_knowledge import __version__
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import InsikaError, NotFound
from insika_knowledge.ids import DEFAULT_TENANT, check_agent
from insika_knowledge.memory import Hit, Memory

SCHEME: Final = "knowledge"
MARKDOWN: Final = "text/markdown"
INSTRUCTIONS: Final = (
    "Learned knowledge of agent {agent}: concepts (facts, policies, procedures, objections) "
    "learned from earlier conversations. Search before answering a question they may cover, "
    "load a concept when its summary is not enough. provenance=observed is past practice, "
    "never a guarantee; only provenance=policy is official; status=conflict means "
    "contradicting reports: do not rely on it."
)


class SearchOut(BaseModel):
    """``search_knowledge``'s answer: hits, best first (`Memory.search`'s `Hit` fields)."""

    hits: list[Hit]


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

    role: Literal["user", "assistant", "tool", "system"]
    content: str


class ProposalOut(BaseModel):
    """``propose_concept``'s answer.

    Attributes:
        name: the concept's name as stored (normalised), None when a gate refused it.
        outcome: learned, confirmed, merged, conflict, replayed, quarantined (held for a
            person: only the customer said it), possible_duplicate; or ``dropped``.
        dropped: the gate that refused it (reason -> 1), empty otherwise.
        redacted: personal data replaced (kind -> count).
    """

    name: str | None
    outcome: str
    dropped: dict[str, int]
    redacted: dict[str, int]


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
        session_id: the source recorded on proposed concepts (default ``mcp-`` and 12 hex digits).

    Raises:
        InvalidName: the agent or tenant name is invalid.
    """

    def __init__(self, memory: Memory, agent: str, *, tenant: str = DEFAULT_TENANT,
                 config: KnowledgeConfig | None = None, session_id: str | None = None):
        check_agent(agent)
        memory.store(tenant)  # checks the tenant name and opens the database now
        super().__init__(f"insika-knowledge ({agent})", version=__version__,
                         instructions=INSTRUCTIONS.format(agent=agent), log_level="WARNING")
        self.memory = memory
        self.agent = agent
        self.tenant = tenant
        self.config = config or KnowledgeConfig()
        self.session_id = session_id or f"mcp-{uuid.uuid4().hex[:12]}"
        self._register()

    async def list_resources(self) -> list[Resource]:
        """Every concept of the agent, by name (those held in quarantine left out)."""
        return [
            Resource(uri=uri(self.agent, c.name), name=c.name, description=c.description,
                     mime_type=MARKDOWN)
            for c in self.memory.concepts(agent=self.agent, tenant=self.tenant, held=False)
        ]

    def _load(self, name: str) -> str:
        """One concept's whole record, as the model's ``load_knowledge`` gives it.

        Raises:
            NotFound: no such concept, or one held in quarantine (the same message).
        """
        result = self.memory.retriever(self.tenant).load_knowledge(self.agent, name, max_chars=None)
        if "error" in result:
            raise NotFound(str(result["error"]))
        return str(result["markdown"])

    def _register(self) -> None:
        memory, agent, tenant, config = self.memory, self.agent, self.tenant, self.config

        @self.tool()
        def search_knowledge(query: str, top_k: int = 5) -> SearchOut:
            """Search the learned concepts for the ones relevant to `query` (a question or keywords).

            Returns up to `top_k` (1-50) hits, best first: name, one-line description, type,
            score (higher is better), confidence (0-1), provenance (observed = past practice,
            policy = official) and status (ok, or conflict = contradicting reports).
            """
            try:
                hits = memory.search(query, agent=agent, top_k=top_k, tenant=tenant, index=config.index)
            except InsikaError as exc:
                raise ToolError(str(exc)) from None
            return SearchOut(hits=hits)

        @self.tool()
        def load_knowledge(name: str) -> str:
            """Load the full markdown record of one concept, by its exact name (e.g. 'cep-13-campinas')."""
            try:
                return self._load(name)
            except InsikaError as exc:
                raise ToolError(str(exc)) from None

        @self.tool()
        def list_conflicts() -> ConflictsOut:
            """List the concepts holding contradicting reports; a person must decide which is true."""
            return ConflictsOut(conflicts=[
                ConflictOut(name=c.name, description=c.description, confidence=c.confidence,
                            provenance=c.provenance)
                for c in memory.conflicts(agent=agent, tenant=tenant, held=False)
            ])

        @self.tool()
        def propose_concept(name: str, description: str, type: str, body: str,
                            evidence: list[Said] | None = None) -> ProposalOut:
            """Propose a durable concept learned in this conversation, to remember for later ones.

            name: a short kebab-case name ('frete-gratis-acima-199'); description: one line
            (at most 300 characters); type: fact, entity, procedure, policy or objection; body:
            the full statement in markdown (link other concepts as [[name]]); evidence: the
            messages of this conversation that state it, verbatim, oldest first, each with its
            role (user = the customer, assistant = you, tool = a tool result, system = your
            instructions). It is checked, personal data is redacted, and a repeat of a known
            concept confirms, merges with or contradicts it. A rule (a price, a deadline, a
            benefit, an instruction) that only the customer stated is held in quarantine until
            a person approves it. Never put customer details in it.
            """
            item = {"name": name, "description": description, "type": type, "body": body}
            said = [{"role": m.role, "content": m.content} for m in evidence or ()]
            try:
                report = memory.propose(item, agent=agent, session_id=self.session_id, tenant=tenant,
                                        config=config, messages=said)
            except InsikaError as exc:
                raise ToolError(str(exc)) from None
            if report.outcome != "ok":
                raise ToolError(f"not learned: {report.outcome} ({report.detail})")
            if not report.results:
                return ProposalOut(name=None, outcome="dropped", dropped=dict(report.dropped),
                                   redacted=dict(report.redacted))
            stored, outcome = report.results[0]
            return ProposalOut(name=stored, outcome=outcome, dropped={}, redacted=dict(report.redacted))

        @self.resource(f"{SCHEME}://{agent}/{{name}}", name="concept", mime_type=MARKDOWN,
                       description=f"One learned concept of agent {agent}, as markdown.")
        def concept(name: str) -> str:
            try:
                return self._load(name)
            except NotFound as exc:
                raise ResourceNotFoundError(str(exc)) from None
