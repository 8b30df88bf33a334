"""A line-based terminal renderer for elicitation questions (MCP 2026-07-28), using only the standard library.

A yes/no confirmation (a form of one boolean field, as `ctx.confirm` sends) takes one answer:
the message, then `Confirm? [y]es / [n]o`; Enter gives the field's default when it has one (else it
asks again), `d` declines, `c` cancels. Keys typed before that prompt are dropped, as at URL consent,
so an Enter meant for something earlier cannot answer it.

Other forms show every restricted field variant: defaults are prefilled (Enter keeps them),
enums are listed with their titles and chosen by number or value, multi-selects by comma-separated
numbers, and each answer is checked with the field's own `check()` and asked again with the error
when it does not fit. Optional fields can be skipped (Enter, or `-` when there is a default). A
form starts with answer / decline / cancel (Enter = answer). The review costs nothing when there is
nothing to review: a one-field form is sent once its answer is valid (the answer just typed and
checked is all there is to see), unless the field looks like a secret. A longer form lists every
answer, and Enter sends (or edit / decline / cancel); keys typed ahead are dropped first, so a run
of Enters through the defaults stops at the review. A field whose name, title or description looks
like a secret (`baton.forms.secret_names.looks_secret`, the rule the form guard refuses such fields
by) is shown with a warning to consider declining.

URL mode follows the spec: the full URL is shown with its registrable domain highlighted and every
`baton.forms.url_safety` finding; a URL that `check_url` refuses is never offered (the answer is Declined);
otherwise nothing is fetched or opened until the user explicitly agrees, and then only through
`opener` (`webbrowser.open`, i.e. the system browser). Because accepting only means consent, the
user then says when they are done (Accepted(None)) or cancels.

End of input (Ctrl-D) and Ctrl-C cancel the question. On a terminal, Ctrl-C is read as a line
terminator for the length of a dialog (ISIG off, VEOL = ^C), so it also cancels when the dialog runs
in a worker thread under `TerminalRenderer.ask`. All text from the server is shown with control and
invisible characters escaped, so it cannot move the cursor or repaint what the user reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
import sys
import threading
import unicodedata
import webbrowser
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TextIO

from ..forms.answers import Accepted, Answer, Cancelled, Declined
from ..forms.fields import (
    BooleanField,
    EnumField,
    FieldSpec,
    FormSpec,
    InvalidAnswer,
    MultiSelectField,
    NumberField,
    StringField,
)
from ..forms.secret_names import field_looks_secret
from ..forms.url_safety import check_url, format_for_display
from .tty_io import flush_typeahead, isatty, line_mode, read_line, tty_fd

__all__ = ["QuestionLike", "TerminalRenderer"]

_STYLES = {
    "bold": "1",
    "dim": "2",
    "error": "1;31",
    "warning": "33",
    "domain": "1;4;36",
    "title": "1;36",
    "danger": "31",
}
_SKIP = object()  # an optional field left unanswered
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})
_FORMAT_HINTS = {
    "email": "an email address",
    "uri": "a URI",
    "date": "a date, YYYY-MM-DD",
    "date-time": "a date and time, YYYY-MM-DDTHH:MM:SSZ",
}


class QuestionLike(Protocol):
    """What `TerminalRenderer.ask` needs of a question (the client layer's `Question` fits)."""

    @property
    def mode(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def form(self) -> FormSpec | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def server(self) -> str | None: ...


class _Cancel(Exception):
    """End of input or Ctrl-C: the question is dismissed."""


def _clean(text: str, *, multiline: bool = False) -> str:
    """Server text made safe for a terminal: controls and invisible characters shown as escapes."""
    out: list[str] = []
    for c in text:
        if c == "\n" and multiline:
            out.append(c)
        elif c == "\t":
            out.append(" ")
        elif unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


class TerminalRenderer:
    """Asks elicitation questions on a terminal. Use `ask_form` / `ask_url`, or `await ask(question)`.

    `stdin`/`stdout` default to the process's; `opener` opens a consented URL (default
    `webbrowser.open`; returning False means no browser could be started); `color` forces ANSI
    styling on or off (default: on when `stdout` is a terminal and NO_COLOR is unset).
    """

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        opener: Callable[[str], object] | None = None,
        color: bool | None = None,
        allow_http_loopback: bool = True,
    ) -> None:
        self._in = stdin if stdin is not None else sys.stdin
        self._out = stdout if stdout is not None else sys.stdout
        self._opener = opener if opener is not None else webbrowser.open
        if color is None:
            color = isatty(self._out) and "NO_COLOR" not in os.environ
        self._color = color
        self._allow_http_loopback = allow_http_loopback
        self._lock = threading.Lock()  # one dialog at a time on one terminal
        self._fd = tty_fd(self._in)
        self._held: list[tuple[TextIO, str]] | None = None  # log lines held while a dialog is open
        self._held_lock = threading.Lock()

    # ----- log lines around dialogs (protocol.md P92)

    def between_dialogs(self, text: str, stream: TextIO | None = None) -> None:
        """Write a line (a log message) to `stream` (stderr) where it cannot break into a question: at once
        when no dialog is open, else as soon as the open one ends. Never blocks."""
        out = stream if stream is not None else sys.stderr
        line = text if text.endswith("\n") else text + "\n"
        with self._held_lock:
            if self._held is not None:
                self._held.append((out, line))
                return
        out.write(line)
        out.flush()

    def log_handler(self, level: int = logging.NOTSET, stream: TextIO | None = None) -> logging.Handler:
        """A `logging` handler that writes each record with `between_dialogs` (to `stream`, stderr by default):
        install it instead of a stream handler, so that a program's log lines never land inside an open prompt."""
        return _BetweenDialogs(self, level, stream)

    @contextlib.contextmanager
    def _holding_logs(self) -> Iterator[None]:
        with self._held_lock:
            self._held = []
        try:
            yield
        finally:
            with self._held_lock:
                held, self._held = self._held or [], None
            for out, line in held:
                with contextlib.suppress(OSError, ValueError):
                    out.write(line)
                    out.flush()

    # ----- public entry points

    async def ask(self, question: QuestionLike) -> Answer[Any]:
        """Answer one question from a worker thread; usable as a Baton client `on_form`/`on_url` handler."""
        if question.mode == "url":
            return await asyncio.to_thread(self.ask_url, question.message, question.url or "", question.server)
        if question.form is None:
            return Declined()
        return await asyncio.to_thread(self.ask_form, question.message, question.form, question.server)

    __call__ = ask

    def ask_form(self, message: str, form: FormSpec, server: str | None = None) -> Answer[Any]:
        """Ask a form question; Accepted(content) with the JSON values, Declined() or Cancelled()."""
        with self._lock, self._holding_logs(), self._dialog():
            try:
                if _is_confirmation(form):
                    return self._confirm(message, form, server)
                return self._form(message, form, server)
            except _Cancel:
                self._line("Cancelled.", "warning")
                return Cancelled()

    def ask_url(self, message: str, url: str, server: str | None = None) -> Answer[None]:
        """Ask for consent to open a URL; Accepted(None) once the user is done, Declined() or Cancelled()."""
        with self._lock, self._holding_logs(), self._dialog():
            try:
                return self._url(message, url, server)
            except _Cancel:
                self._line("Cancelled.", "warning")
                return Cancelled()

    # ----- confirmations

    def _confirm(self, message: str, form: FormSpec, server: str | None) -> Answer[Any]:
        """A yes/no question: one answer, y or n (Enter = the default, if the field has one)."""
        field = form.fields[0]
        self._header(f"{_clean(server)} asks" if server else "A server asks")
        self._line(_clean(message, multiline=True))
        if field.description:
            self._line(_clean(field.description, multiline=True), "dim")
        default = field.default if isinstance(field.default, bool) else None
        label = _clean(field.title or field.name)
        question = label if label.endswith("?") else label + "?"
        enter = "" if default is None else f", Enter = {'yes' if default else 'no'}"
        self._line("d declines, c or Ctrl-D cancels.", "dim")
        self._flush_typeahead()  # an Enter typed for something earlier must not answer this
        while True:
            word = self._read(f"{question} [y]es / [n]o{enter}: ").strip().lower()
            if not word and default is not None:
                value = default
            elif word in _YES:
                value = True
            elif word in _NO:
                value = False
            elif word in ("d", "decline"):
                self._line("Declined.", "warning")
                return Declined()
            elif word in ("c", "cancel"):
                self._line("Cancelled.", "warning")
                return Cancelled()
            else:
                self._line("Type y or n (d declines, c cancels).", "error")
                continue
            self._line(f"Sent: {'yes' if value else 'no'}.", "dim")
            return Accepted(form.validate({field.name: value}))

    # ----- form mode

    def _form(self, message: str, form: FormSpec, server: str | None) -> Answer[Any]:
        self._header(f"{_clean(server)} asks" if server else "A server asks")
        self._line(_clean(message, multiline=True))
        count = len(form.fields)
        self._line(
            f"{count} question{'s' if count != 1 else ''}. Enter keeps a default; Ctrl-D or Ctrl-C cancels.", "dim"
        )
        while True:
            choice = self._read("[a]nswer / [d]ecline / [c]ancel (Enter = answer): ").strip().lower()
            if choice in ("", "a", "answer"):
                break
            if choice in ("d", "decline"):
                self._line("Declined.", "warning")
                return Declined()
            if choice in ("c", "cancel"):
                self._line("Cancelled.", "warning")
                return Cancelled()
            self._line("Type a to answer, d to decline or c to cancel.", "error")
        answers: dict[str, Any] = {}
        for index, field in enumerate(form.fields, 1):
            self._field(field, index, count, answers)
        if count <= 1 and not any(map(field_looks_secret, form.fields)):  # the one answer was just typed and checked
            try:
                content = form.validate(answers)
            except InvalidAnswer as exc:  # not expected: the field's own check passed
                self._line(f"! {exc}", "error")
            else:
                self._line("Sent.", "dim")
                return Accepted(content)
        while True:
            self._review(form, answers)
            self._flush_typeahead()  # Enter sends: a run of Enters through the defaults stops here
            choice = self._read("Enter sends; or [e]dit / [d]ecline / [c]ancel: ").strip().lower()
            if choice in ("", "s", "send"):
                try:
                    content = form.validate(answers)
                except InvalidAnswer as exc:
                    self._line(f"! {exc}", "error")
                    continue
                self._line("Sent.", "dim")
                return Accepted(content)
            if choice in ("e", "edit"):
                self._edit(form, answers)
            elif choice in ("d", "decline"):
                self._line("Declined.", "warning")
                return Declined()
            elif choice in ("c", "cancel"):
                self._line("Cancelled.", "warning")
                return Cancelled()
            else:
                self._line("Press Enter to send, or type e to edit, d to decline or c to cancel.", "error")

    def _edit(self, form: FormSpec, answers: dict[str, Any]) -> None:
        count = len(form.fields)
        if count == 0:
            return
        while True:
            text = self._read(f"Edit which answer (1-{count}, Enter for all)? ").strip()
            if not text:
                for index, field in enumerate(form.fields, 1):
                    self._field(field, index, count, answers)
                return
            if text.isdigit() and 1 <= int(text) <= count:
                index = int(text)
                self._field(form.fields[index - 1], index, count, answers)
                return
            self._line(f"Type a number from 1 to {count}.", "error")

    def _field(self, field: FieldSpec, index: int, count: int, answers: dict[str, Any]) -> None:
        """Ask one field until it has a valid answer (or is skipped); updates `answers`."""
        current = answers.get(field.name, field.default)
        label = _clean(field.title or field.name)
        self._out.write("\n")
        self._line(f"({index}/{count}) {self._style(label, 'bold')}{' *' if field.required else ''}")
        if field.description:
            self._line("  " + _clean(field.description, multiline=True).replace("\n", "\n  "), "dim")
        if field_looks_secret(field):
            self._line(
                "  ! This looks like a request for a secret. Servers must not ask for passwords, keys or payment "
                "data in a form; consider declining.",
                "warning",
            )
        choices = _values(field)
        if choices is not None:
            titles = field.titles if isinstance(field, (EnumField, MultiSelectField)) else None
            chosen = set(current) if isinstance(current, list) else {current}
            for n, value in enumerate(choices, 1):
                title = (titles or {}).get(value)
                text = f"{_clean(title)} ({_clean(value)})" if title and title != value else _clean(value)
                mark = "  (default)" if value in chosen else ""
                self._line(f"    {n}) {text}{self._style(mark, 'dim')}")
        hints = [_hint(field)]
        if current is not None:
            hints.append(f"Enter keeps: {_shown(field, current)}")
            if not field.required:
                hints.append("- skips")
        elif not field.required:
            hints.append("optional, Enter skips")
        self._line("  " + "; ".join(hints), "dim")
        while True:
            text = self._read("  > ").strip()
            try:
                value = self._parse(field, text, current)
            except InvalidAnswer as exc:
                self._line(f"  ! {exc}", "error")
                continue
            if value is _SKIP:
                answers.pop(field.name, None)
                return
            try:
                answers[field.name] = field.check(value)
            except InvalidAnswer as exc:
                self._line(f"  ! {exc}", "error")
                continue
            return

    def _parse(self, field: FieldSpec, text: str, current: Any) -> Any:
        """The JSON value typed for a field (not yet checked), or _SKIP; raises InvalidAnswer."""
        name = _clean(field.title or field.name)
        if text == "-" and not field.required:
            return _SKIP
        if not text:
            if current is not None:
                return current
            if not field.required:
                return _SKIP
            if isinstance(field, MultiSelectField):
                return []
            raise InvalidAnswer(f"{name}: an answer is required")
        if isinstance(field, BooleanField):
            word = text.lower()
            if word in _YES:
                return True
            if word in _NO:
                return False
            raise InvalidAnswer(f"{name}: answer y or n")
        if isinstance(field, NumberField):
            if not _NUMBER.fullmatch(text):
                raise InvalidAnswer(f"{name}: expected a number")
            if re.fullmatch(r"[+-]?[0-9]+", text):
                return int(text)
            number = float(text)
            if not math.isfinite(number):
                raise InvalidAnswer(f"{name}: expected a number")
            return number
        if isinstance(field, EnumField):
            return _choose(field, text, name)
        if isinstance(field, MultiSelectField):
            picked: list[str] = []
            for part in text.split(","):
                if part.strip():
                    value = _choose(field, part.strip(), name)
                    if value not in picked:
                        picked.append(value)
            return picked
        return text

    def _review(self, form: FormSpec, answers: dict[str, Any]) -> None:
        self._out.write("\n")
        self._line("Review your answers:", "bold")
        for index, field in enumerate(form.fields, 1):
            label = _clean(field.title or field.name)
            value = _shown(field, answers[field.name]) if field.name in answers else self._style("(skipped)", "dim")
            self._line(f"  {index}. {label}: {value}")

    # ----- URL mode

    def _url(self, message: str, url: str, server: str | None) -> Answer[None]:
        self._header(
            f"{_clean(server)} asks you to open a web page" if server else "A server asks you to open a web page"
        )
        self._line(_clean(message, multiline=True))
        report = check_url(url, allow_http_loopback=self._allow_http_loopback)
        segments = format_for_display(report)
        shown = "".join(text for text, _ in segments)
        self._out.write("\n")
        self._line("  Address: " + "".join(self._style(text, style) for text, style in segments))
        if report.ok and shown != url:
            self._line(f"  Written: {_clean(url)}", "dim")
        if report.ok:
            site = next((text for text, style in segments if style == "domain"), report.display_host)
            self._line(f"  Site:    {self._style(site, 'domain')}")
        for error in report.errors:
            self._line(f"  X {error.message}", "error")
        for warning in report.warnings:
            self._line(f"  ! {warning.message}", "warning")
        if not report.ok:
            self._line("This address was refused and will not be opened. The request is declined.", "error")
            return Declined()
        self._line("Nothing has been opened. The page opens in your web browser, outside this program.", "dim")
        self._flush_typeahead()
        while True:
            choice = self._read("Open this page? [o]pen / [d]ecline / [c]ancel: ").strip().lower()
            if choice in ("o", "open", "y", "yes"):
                break
            if choice in ("d", "decline", "n", "no"):
                self._line("Declined; nothing was opened.", "warning")
                return Declined()
            if choice in ("c", "cancel"):
                self._line("Cancelled; nothing was opened.", "warning")
                return Cancelled()
            self._line("Type o to open, d to decline or c to cancel.", "error")
        self._open(url)
        while True:
            choice = self._read("When you are done in the browser: [d]one, continue / [o]pen again / [c]ancel: ")
            choice = choice.strip().lower()
            if choice in ("d", "done", "continue"):
                return Accepted(None)
            if choice in ("o", "open"):
                self._open(url)
            elif choice in ("c", "cancel"):
                self._line("Cancelled.", "warning")
                return Cancelled()
            else:
                self._line("Type d when you are done, o to open the page again, or c to cancel.", "error")

    def _open(self, url: str) -> None:
        if self._opener(url) is False:
            self._line("Could not start a web browser; open the address above yourself.", "warning")
        else:
            self._line("Opened in your web browser.", "dim")

    # ----- terminal plumbing

    def _style(self, text: str, style: str) -> str:
        code = _STYLES.get(style)
        if not self._color or not code or not text:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def _line(self, text: str, style: str | None = None) -> None:
        self._out.write((self._style(text, style) if style else text) + "\n")
        self._out.flush()

    def _header(self, text: str) -> None:
        self._out.write("\n")
        self._line(f"== {text} ==", "title")

    def _read(self, prompt: str) -> str:
        """One line typed by the user, without its line ending; raises _Cancel on end of input or Ctrl-C."""
        self._out.write(self._style(prompt, "bold"))
        self._out.flush()
        try:
            line = self._read_fd() if self._fd is not None else self._in.readline()
        except KeyboardInterrupt:
            self._out.write("\n")
            raise _Cancel from None
        if not line or "\x03" in line:
            self._out.write("\n")
            raise _Cancel
        return line.rstrip("\r\n")

    def _read_fd(self) -> str:
        """Read a terminal line straight from its descriptor (Ctrl-C ends a line there, see `_dialog`)."""
        assert self._fd is not None
        return read_line(self._fd, getattr(self._in, "encoding", None) or "utf-8")

    def _flush_typeahead(self) -> None:
        """Drop keys typed before the consent prompt, so an earlier Enter cannot consent."""
        if self._fd is not None:
            flush_typeahead(self._fd)

    def _dialog(self) -> contextlib.AbstractContextManager[None]:
        """Line mode with echo for the dialog; Ctrl-C becomes an end-of-line character instead of a signal."""
        return line_mode(self._fd) if self._fd is not None else contextlib.nullcontext()


def _is_confirmation(form: FormSpec) -> bool:
    """A yes/no question: a form of exactly one boolean field (what `ctx.confirm` sends)."""
    return len(form.fields) == 1 and isinstance(form.fields[0], BooleanField)


def _values(field: FieldSpec) -> list[str] | None:
    if isinstance(field, (EnumField, MultiSelectField)):
        return [str(v) for v in field.values]
    return None


def _choose(field: EnumField | MultiSelectField, text: str, name: str) -> str:
    """An enum value picked by its number in the list, its value, or (case-insensitively) its title."""
    values = [str(v) for v in field.values]
    if text.isdigit() and 1 <= int(text) <= len(values):
        return values[int(text) - 1]
    if text in values:
        return text
    titles = field.titles or {}
    folded = text.casefold()
    matches = [v for v in values if v.casefold() == folded or titles.get(v, "").casefold() == folded]
    if len(matches) == 1:
        return matches[0]
    raise InvalidAnswer(f"{name}: choose a number from 1 to {len(values)}, or one of the values")


def _hint(field: FieldSpec) -> str:
    if isinstance(field, StringField):
        parts = [_FORMAT_HINTS.get(field.format or "", "text")]
        low, high = field.min_length, field.max_length
        if low is not None and high is not None:
            parts.append(f"{low} to {high} characters")
        elif low is not None:
            parts.append(f"at least {low} character{'s' if low != 1 else ''}")
        elif high is not None:
            parts.append(f"at most {high} characters")
        return ", ".join(parts)
    if isinstance(field, NumberField):
        kind = "a whole number" if field.integer else "a number"
        low_n, high_n = field.minimum, field.maximum
        if low_n is not None and high_n is not None:
            return f"{kind} from {_num(low_n)} to {_num(high_n)}"
        if low_n is not None:
            return f"{kind}, at least {_num(low_n)}"
        if high_n is not None:
            return f"{kind}, at most {_num(high_n)}"
        return kind
    if isinstance(field, BooleanField):
        return "y or n"
    if isinstance(field, EnumField):
        return "choose one: its number or value"
    if isinstance(field, MultiSelectField):
        text = "choose any: numbers separated by commas"
        if field.min_items is not None and field.max_items is not None:
            text += f" ({field.min_items} to {field.max_items})"
        elif field.min_items is not None:
            text += f" (at least {field.min_items})"
        elif field.max_items is not None:
            text += f" (at most {field.max_items})"
        return text
    return "text"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _shown(field: FieldSpec, value: Any) -> str:
    """An answer as the review shows it: titles for choices, yes/no for booleans."""
    if isinstance(field, BooleanField) and isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(field, (EnumField, MultiSelectField)):
        titles = field.titles or {}
        items = value if isinstance(value, list) else [value]
        shown = [f"{titles[v]} ({v})" if v in titles and titles[v] != v else str(v) for v in items]
        return _clean(", ".join(shown)) if shown else "(none)"
    return _clean(str(value))


class _BetweenDialogs(logging.Handler):
    def __init__(self, renderer: TerminalRenderer, level: int, stream: TextIO | None) -> None:
        super().__init__(level)
        self.renderer = renderer
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.renderer.between_dialogs(self.format(record), self.stream)
        except Exception:
            self.handleError(record)
