"""Reading a folder of skills from disk, once, when the server registers it (protocol.md P181).

The folder is one skill (it holds a `SKILL.md`) or holds one skill per subfolder. Every file of a skill is
read into memory with its digest and size, so what `skills/list` promises is what `resources/read` serves
for as long as the process runs. Names beginning with `.` and `__pycache__` folders are not part of a
skill. A symbolic link anywhere below the folder is refused: a skill is served as it is on disk, and a
link could reach files outside it. Every problem is gathered, each at the file it is in.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..protocol import skills as wire
from .source import shown_path

_EXTRA_TYPES = {".md": "text/markdown", ".py": "text/x-python", ".sh": "text/x-shellscript", ".txt": "text/plain"}


def _mime_type(name: str) -> str:
    import mimetypes  # noqa: PLC0415 (read once, when a folder is registered)

    suffix = os.path.splitext(name)[1].lower()
    return _EXTRA_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: its URI, its bytes, and what `resources/read` serves of them."""

    uri: str
    path: str  # inside the skill, with `/` (`references/FORMS.md`)
    data: bytes
    mime_type: str
    digest: str = field(init=False)  # of `data`, once: the files do not change while served

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", wire.digest(self.data))

    @property
    def content(self) -> str | bytes:
        """Text when the bytes are UTF-8 (they encode back to the same bytes), else the bytes (a blob)."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return self.data

    def record(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True, slots=True)
class ServedSkill:
    """One skill as a server serves it."""

    name: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]
    directories: tuple[str, ...]  # inside the skill, with `/`, the skill's own folder as ""
    source: str = ""  # the folder it was read from, as the user names it

    @property
    def root(self) -> str:
        return wire.SCHEME + self.name

    @property
    def uri(self) -> str:
        return f"{self.root}/{wire.SKILL_FILE}"

    def entry(self) -> dict[str, Any]:
        """Its entry in `skills/list` and `skills/get`."""
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": [f.record() for f in self.files]}

    def directory_uri(self, inner: str) -> str:
        return f"{self.root}/{quote(inner)}" if inner else self.root


@dataclass(slots=True)
class FolderProblems(Exception):
    """What is wrong with a folder of skills, as (where, what) pairs."""

    problems: list[tuple[str, str]] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(f"{where}: {what}" for where, what in self.problems)


def read_skills(folder: str | os.PathLike[str]) -> list[ServedSkill]:
    """The skills in `folder` (one skill, or one per subfolder); `FolderProblems` listing every problem."""
    problems = FolderProblems()
    base = Path(folder).expanduser()
    shown = shown_path(str(base))
    if not base.is_dir():
        what = "is not a folder" if base.exists() else "does not exist"
        problems.problems.append((shown, f"{what}: give the folder that holds your skills (each with a SKILL.md)"))
        raise problems
    base = base.resolve()  # the folder itself may be a link; nothing below it may be
    if (base / wire.SKILL_FILE).exists() or (base / wire.SKILL_FILE).is_symlink():
        folders = [base]
    else:
        try:
            folders = sorted(p for p in base.iterdir() if not _ignored(p.name) and (p.is_dir() or p.is_symlink()))
        except OSError as exc:
            problems.problems.append((shown, f"cannot be read: {exc.strerror or exc}"))
            raise problems from None
        if not folders:
            problems.problems.append((shown, "holds no skill: put each skill in a folder of its own, with a SKILL.md"))
    skills = [skill for path in folders if (skill := _read_skill(path, problems)) is not None]
    seen: dict[str, str] = {}
    for skill in skills:
        if skill.name in seen:
            also = f"the skill name {skill.name!r} is also used by {seen[skill.name]}"
            problems.problems.append((skill.source, also))
        seen[skill.name] = skill.source
    if problems.problems:
        raise problems
    return skills


def _ignored(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


def _read_skill(folder: Path, problems: FolderProblems) -> ServedSkill | None:
    shown = shown_path(str(folder))
    if folder.is_symlink():
        problems.problems.append((shown, _LINK))
        return None
    manifest = folder / wire.SKILL_FILE
    if not manifest.is_file() or manifest.is_symlink():
        what = _LINK if manifest.is_symlink() else "has no SKILL.md: a skill is a folder with a SKILL.md at its root"
        problems.problems.append((shown if not manifest.is_symlink() else shown_path(str(manifest)), what))
        return None
    before = len(problems.problems)
    files: list[SkillFile] = []
    directories = [""]
    name = folder.name
    for here, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _ignored(d))
        inner = Path(here).relative_to(folder).as_posix()
        inner = "" if inner == "." else inner
        for d in dirs:
            path = Path(here, d)
            if path.is_symlink():
                problems.problems.append((shown_path(str(path)), _LINK))
            else:
                directories.append(f"{inner}/{d}" if inner else d)
        dirs[:] = [d for d in dirs if not Path(here, d).is_symlink()]
        for n in sorted(names):
            if _ignored(n):
                continue
            path = Path(here, n)
            relative = f"{inner}/{n}" if inner else n
            try:
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode):
                    problems.problems.append((shown_path(str(path)), _LINK))
                    continue
                if not stat.S_ISREG(mode):
                    problems.problems.append((shown_path(str(path)), "is not a regular file: leave it out"))
                    continue
                data = path.read_bytes()
            except OSError as exc:
                problems.problems.append((shown_path(str(path)), f"cannot be read: {exc.strerror or exc}"))
                continue
            uri = f"{wire.SCHEME}{name}/{quote(relative)}"
            mime = wire.MARKDOWN_MIME if relative == wire.SKILL_FILE else _mime_type(n)
            files.append(SkillFile(uri, relative, data, mime))
    files.sort(key=lambda f: (f.path != wire.SKILL_FILE, f.path))  # SKILL.md first
    frontmatter = _frontmatter(manifest, files[0].data if files else b"", name, problems)
    if len(files) > wire.MAX_FILES:
        problems.problems.append((shown, f"has {len(files)} files; a skill may have at most {wire.MAX_FILES}"))
    total = sum(len(f.data) for f in files)
    if total > wire.MAX_BYTES:
        problems.problems.append((shown, f"holds {total} bytes; a skill may hold at most 16 MiB ({wire.MAX_BYTES})"))
    if len(problems.problems) > before or frontmatter is None:
        return None
    return ServedSkill(name, frontmatter, tuple(files), tuple(directories), shown)


_LINK = (
    "is a symbolic link; a skill is served as it is on disk and a link could reach files outside it: "
    "copy the file or folder in instead"
)


def _frontmatter(manifest: Path, data: bytes, folder_name: str, problems: FolderProblems) -> dict[str, Any] | None:
    """The checked frontmatter of a skill's SKILL.md; None (with the problems recorded) when it has any."""
    shown = shown_path(str(manifest))
    found: list[str] = []
    try:
        frontmatter = wire.parse_frontmatter(data.decode("utf-8"))
    except UnicodeDecodeError:
        found.append("is not UTF-8 text")
        frontmatter = {}
    except ValueError as exc:
        found.append(str(exc))
        frontmatter = {}
    if frontmatter:
        name = frontmatter.get("name")
        problem = wire.name_problem(name)
        if problem:
            found.append(problem)
        elif name != folder_name:
            found.append(
                f"its name is {name!r} but its folder is {folder_name!r}: a skill's name is its folder's, rename one"
            )
        description = frontmatter.get("description")
        if not isinstance(description, str) or not description.strip():
            found.append("the frontmatter needs a description (a non-empty string): it tells a model when to use it")
        elif len(description) > wire.MAX_DESCRIPTION:
            found.append(f"the description has {len(description)} characters; at most {wire.MAX_DESCRIPTION}")
        metadata = frontmatter.get("metadata")
        if isinstance(metadata, dict):
            reserved = sorted(k for k in metadata if k.startswith("io.modelcontextprotocol/"))
            if reserved:
                found.append(f"metadata keys under io.modelcontextprotocol/ are reserved: {', '.join(reserved)}")
    problems.problems.extend((shown, what) for what in found)
    return None if found else frontmatter
