"""Skills in the client (SEP-2640): listing them, and fetching a skill's files verified (protocol.md P183).

Listing reads entries only: no file is fetched before the caller asks for one. A file fetched with
`read_skill_file` is checked against the entry it was listed in before it is returned: its size, its
digest, and for the SKILL.md the YAML frontmatter, field by field. Any difference raises
`SkillVerificationError` and the bytes are not returned; `load_skill` stops at the first file that fails,
so nothing after a tampered SKILL.md is fetched.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol import skills as wire
from .errors import ClientError

if TYPE_CHECKING:
    from .core import Client


class SkillVerificationError(ClientError):
    """A skill file the server served differs from the entry it listed: not used. The message says how."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"skill file {uri} refused: {reason}")
        self.uri = uri
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SkillFileEntry:
    """One file of a listed skill: where to read it, and what it must be."""

    uri: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class Skill:
    """One entry of `skills/list` (or `skills/get`): the skill's SKILL.md URI, its frontmatter, its files
    (`None` when the server says they are `"dynamic"`, unverifiable), and the raw entry."""

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFileEntry, ...] | None
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        name = self.frontmatter.get("name")
        return name if isinstance(name, str) and name else (wire.skill_name(self.uri) or self.uri)

    @property
    def description(self) -> str:
        description = self.frontmatter.get("description")
        return description if isinstance(description, str) else ""

    def file(self, uri: str) -> SkillFileEntry | None:
        return next((f for f in self.files or () if f.uri == uri), None)


def skill_entry(raw: Any) -> Skill:
    """The `Skill` a raw entry describes; `ClientError` naming what is malformed."""
    if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
        raise ClientError("the server listed a skill without a uri")
    uri = raw["uri"]
    frontmatter = raw.get("frontmatter")
    if not isinstance(frontmatter, dict):
        raise ClientError(f"the server listed skill {uri} without a frontmatter object")
    resources = raw.get("resources")
    files: tuple[SkillFileEntry, ...] | None = None
    if isinstance(resources, list):
        found = []
        for item in resources:
            if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                raise ClientError(f"skill {uri}: a file without a uri")
            size = item.get("size")
            sized = isinstance(size, int) and not isinstance(size, bool) and size >= 0
            if not wire.is_digest(item.get("digest")) or not sized:
                raise ClientError(f"skill {uri}: file {item['uri']} has no valid digest and size")
            found.append(SkillFileEntry(item["uri"], item["digest"], int(size or 0)))
        files = tuple(found)
    elif resources != "dynamic":
        raise ClientError(f'skill {uri}: "resources" is neither a list of files nor "dynamic"')
    return Skill(uri, frontmatter, files, raw)


async def list_skills(client: Client) -> list[Skill]:
    """Every skill the server lists (every page); no file is read."""
    await _require_extension(client)
    return [skill_entry(raw) for raw in await client._all("skills/list", "skills")]


async def get_skill(client: Client, uri: str) -> Skill:
    """The entry of one skill by the URI of its SKILL.md (`skills/get`); no file is read."""
    await _require_extension(client)
    result = await client.request("skills/get", {"uri": uri})
    return skill_entry(result.get("skill"))


async def read_skill_file(client: Client, skill: Skill, uri: str | None = None) -> bytes:
    """One file of `skill` (its SKILL.md by default), verified against its entry: size, digest, and for the
    SKILL.md the frontmatter. `SkillVerificationError` on any difference; the bytes only when they match."""
    uri = uri or skill.uri
    if skill.files is None:
        raise SkillVerificationError(uri, 'the server lists this skill\'s files as "dynamic", so none can be verified')
    expected = skill.file(uri)
    if expected is None:
        raise ClientError(f"{uri} is not a file of skill {skill.uri}; its files are listed in skill.files")
    result = await client.read_resource(uri)
    contents = [c for c in result.contents if c.uri == uri] or result.contents[:1]
    if not contents:
        raise SkillVerificationError(uri, "the server returned no contents")
    try:
        data = contents[0].data
    except (binascii.Error, ValueError):
        raise SkillVerificationError(uri, "the server returned a blob that is not base64") from None
    if len(data) != expected.size:
        raise SkillVerificationError(uri, f"the entry lists {expected.size} bytes, the server served {len(data)}")
    actual = wire.digest(data)
    if actual != expected.digest:
        raise SkillVerificationError(uri, f"its digest is {actual}, the entry lists {expected.digest}")
    if uri == skill.uri:
        check_frontmatter(skill, data)
    return data


def check_frontmatter(skill: Skill, data: bytes) -> None:
    """Raise `SkillVerificationError` unless the SKILL.md `data` has the entry's frontmatter, field by field."""
    try:
        parsed = wire.parse_frontmatter(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SkillVerificationError(skill.uri, "the SKILL.md is not UTF-8 text") from None
    except ValueError as exc:
        raise SkillVerificationError(skill.uri, str(exc)) from None
    differ = wire.frontmatter_differences(skill.frontmatter, parsed)
    if differ:
        raise SkillVerificationError(
            skill.uri, f"its frontmatter differs from the entry's in {', '.join(differ)}: the skill is not loaded"
        )


async def load_skill(client: Client, skill: Skill) -> dict[str, bytes]:
    """Every file of `skill`, each verified, its SKILL.md first: URI -> bytes. The first file that fails
    raises `SkillVerificationError` and no later one is fetched."""
    out = {skill.uri: await read_skill_file(client, skill)}
    for entry in skill.files or ():
        if entry.uri not in out:
            out[entry.uri] = await read_skill_file(client, skill, entry.uri)
    return out


async def _require_extension(client: Client) -> None:
    if wire.EXTENSION not in await client.server_extensions():
        raise ClientError(f"the server serves no skills: it does not declare the {wire.EXTENSION} extension")
