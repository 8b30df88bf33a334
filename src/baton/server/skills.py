"""The skills a server serves (SEP-2640) and the methods that show them: `skills/list`, `skills/get`,
`resources/directory/read` (protocol.md P180-P182).

The methods exist while the server declares `io.modelcontextprotocol/skills` (`Server.add_skills` does)
and are answered to every client, as `resources/list` is; a server without it answers -32601. Files are
read with `resources/read` from the registry here: only the exact URIs of the files read at start-up
exist, so no URI (`..`, `%2e%2e`, a link) reaches anything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..protocol import skills as wire
from ..protocol.capabilities import ClientCapabilities
from ..protocol.errors import ResourceNotFound, invalid_params, method_not_found
from ..protocol.messages import Message
from .exchange import Exchange
from .registry import RegisteredResource
from .skill_folder import ServedSkill, SkillFile

if TYPE_CHECKING:
    from .methods import MethodHandler, Methods


class SkillSet:
    """Every skill a server serves, by URI, with its files as resources and its folders as directories."""

    def __init__(self) -> None:
        self.skills: dict[str, ServedSkill] = {}  # SKILL.md URI -> skill
        self.files: dict[str, RegisteredResource] = {}  # every file's URI -> its resource
        self.directories: dict[str, list[dict[str, Any]]] = {}  # directory URI -> its children

    def __bool__(self) -> bool:
        return bool(self.skills)

    def names(self) -> set[str]:
        return {skill.name for skill in self.skills.values()}

    def add(self, skill: ServedSkill, resources: Iterable[RegisteredResource]) -> None:
        self.skills[skill.uri] = skill
        self.files.update((r.uri, r) for r in resources)
        for inner in skill.directories:
            self.directories[skill.directory_uri(inner)] = _children(skill, inner)


def _children(skill: ServedSkill, inner: str) -> list[dict[str, Any]]:
    """The direct children of one folder of a skill, as resources: files, then folders (`inode/directory`)."""
    prefix = f"{inner}/" if inner else ""
    out: list[dict[str, Any]] = []
    for file in skill.files:
        rest = file.path[len(prefix) :] if file.path.startswith(prefix) else None
        if rest is not None and "/" not in rest:
            out.append(_file_child(file, rest))
    for folder in skill.directories:
        rest = folder[len(prefix) :] if folder.startswith(prefix) and folder else None
        if rest and "/" not in rest:
            out.append({"uri": skill.directory_uri(folder), "name": rest, "mimeType": wire.DIRECTORY_MIME})
    return out


def _file_child(file: SkillFile, name: str) -> dict[str, Any]:
    return {"uri": file.uri, "name": name, "mimeType": file.mime_type, "size": len(file.data)}


def skill_methods(methods: Methods) -> dict[str, MethodHandler]:
    """The handlers of the skills methods, for the server's method table."""
    server = methods.server

    def offered(method: str) -> dict[str, Any]:
        settings = server.extensions.get(wire.EXTENSION)
        if settings is None:  # protocol.md P180: only a server that declares the extension has the methods
            raise method_not_found(method)
        return settings

    async def skills_list(msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        offered(msg.method)
        entries = [server.skills.skills[uri].entry() for uri in sorted(server.skills.skills)]
        return methods._page(msg.params, entries, "skills")

    async def skills_get(msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        offered(msg.method)
        uri = msg.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params('Invalid params: skills/get needs "uri" (a string): the URI of a SKILL.md')
        skill = server.skills.skills.get(uri)
        if skill is None:
            raise invalid_params(f"Invalid params: no skill is served at {uri}; skills/list lists them", {"uri": uri})
        return methods.cacheable({"resultType": "complete", "skill": skill.entry()})

    async def directory_read(msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        if offered(msg.method).get("directoryRead") is not True:
            raise method_not_found(msg.method)
        uri = msg.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params('Invalid params: resources/directory/read needs "uri" (a string)')
        children = server.skills.directories.get(uri)
        if children is None:
            if uri in server.skills.files:  # protocol.md P182: a file is not a directory (-32602)
                raise invalid_params(f"Invalid params: {uri} is a file, not a directory; read it with resources/read")
            raise ResourceNotFound(uri)
        return methods._page(msg.params, children, "resources")

    return {"skills/list": skills_list, "skills/get": skills_get, "resources/directory/read": directory_read}
