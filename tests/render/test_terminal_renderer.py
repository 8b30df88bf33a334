"""The terminal renderer driven through a real pseudo-terminal, keystroke by keystroke.

Each test starts a small Python program on the slave side of a pty (stdin, stdout and stderr), which
asks one question with `baton.render.TerminalRenderer` and prints the answer as JSON on its last line
(with the URLs its injected opener was asked to open). The test plays the user on the master side:
it waits for each prompt and types, with Enter sent as a carriage return as a real terminal does.
Rules: digest §5.2 (form variants, defaults), §5.3 (accept / decline / cancel; URL accept is consent
only) and §5.4 (show the full URL, get consent, never prefetch, refuse unsafe URLs).
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
import support.terminal
from support.markers import needs
from support.terminal import CTRL_C, CTRL_D, ENTER

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
    pytest.mark.timeout(60),
]

PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys, types
    from baton.forms import (BooleanField, Choice, EnumField, FormSpec, MultiSelectField, NumberField,
                             StringField, Accepted)
    from baton.render import TerminalRenderer

    opened = []

    def opener(url):
        opened.append(url)
        return True

    FORM = FormSpec([
        StringField("name", title="Name", min_length=2, max_length=40, description="Your full name"),
        StringField("email", title="Email", format="email"),
        NumberField("age", title="Age", integer=True, minimum=18, maximum=130),
        NumberField("height", title="Height", required=False),
        BooleanField("subscribe", title="Subscribe", default=True),
        EnumField("color", title="Colour", values=[Choice("r", "Red"), Choice("g", "Green"), Choice("b", "Blue")],
                  default="r"),
        EnumField("size", title="Size", values=["small", "medium", "large"]),
        MultiSelectField("tags", title="Tags", values=[Choice("x", "Ex"), Choice("y", "Why"), Choice("z", "Zed")],
                         min_items=1, max_items=2),
        StringField("nickname", title="Nickname", required=False),
        StringField("born", title="Birthday", format="date", required=False, default="2000-01-01"),
    ], name="profile")
    SMALL = FormSpec([StringField("city", title="City"), NumberField("year", title="Year", integer=True)])
    ONE = FormSpec([StringField("city", title="City")])
    SECRET_ONE = FormSpec([StringField("recovery_code", title="Recovery code")])
    # The form `ctx.confirm` sends, as the client parses it from the wire.
    from baton.forms.parse import parse_schema
    from baton.server.context import CONFIRM_FORM
    CONFIRMS = {
        "ctx": parse_schema(CONFIRM_FORM.schema),
        "yes": FormSpec([BooleanField("go", title="Go ahead?", description="It is safe.", default=True)]),
        "no": FormSpec([BooleanField("subscribe", title="Subscribe", default=False)]),
    }
    FORMS = {"full": FORM, "small": SMALL, "one": ONE, "secret-one": SECRET_ONE}

    renderer = TerminalRenderer(opener=opener)
    kind, arg = sys.argv[1], sys.argv[2]
    if kind == "form":
        answer = renderer.ask_form("Tell us about you", FORMS[arg], "profile-server")
    elif kind == "confirm":
        answer = renderer.ask_form("Delete project apollo? This cannot be undone.", CONFIRMS[arg], "projects")
    elif kind == "url":
        answer = renderer.ask_url("Connect your Acme account", arg, "acme")
    else:  # "async-form" / "async-url": the async handler, as the client layer calls it
        mode = kind.removeprefix("async-")
        forms = {"form": SMALL, "confirm": CONFIRMS["ctx"]}
        question = types.SimpleNamespace(
            mode="form" if mode == "confirm" else mode, message="Where?", form=forms.get(mode), url=arg,
            server="async-server",
        )
        answer = asyncio.run(renderer.ask(question))
    data = answer.data if isinstance(answer, Accepted) else None
    import termios
    isig = bool(termios.tcgetattr(0)[3] & termios.ISIG)  # the terminal's own Ctrl-C is back after the dialog
    print("RESULT " + json.dumps({"answer": type(answer).__name__, "data": data, "opened": opened, "isig": isig}))
    """
)


class Terminal(support.terminal.Terminal):
    """The test program on a pty, asking one question; `result()` is its answer."""

    def __init__(self, *args: str) -> None:
        super().__init__([sys.executable, "-c", PROGRAM, *args])

    def result(self) -> dict[str, Any]:
        self.expect("RESULT ")
        line = self.expect("\n")
        self.proc.wait(timeout=15)
        assert self.proc.returncode == 0, self.screen
        parsed: dict[str, Any] = json.loads(line)
        assert parsed.pop("isig") is True, "the terminal mode was not restored"
        return parsed


@pytest.fixture
@needs("process")
def terminal() -> Iterator[Any]:
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        started.append(Terminal(*args))
        return started[-1]

    yield start
    for term in started:
        term.close()


START = "Enter = answer): "
PROMPT = "  > "
REVIEW = "Enter sends; or [e]dit / [d]ecline / [c]ancel: "
YES_NO = "[y]es / [n]o: "
CONSENT = "[o]pen / [d]ecline / [c]ancel: "
DONE = "[d]one, continue / [o]pen again / [c]ancel: "


def test_form_with_every_field_kind(terminal: Any) -> None:
    t = terminal("form", "full")
    intro = t.answer(START, "")
    assert "profile-server asks" in intro and "Tell us about you" in intro
    # String with a length limit: too short first, then fine.
    assert "Your full name" in t.answer(PROMPT, "A")
    assert "must be at least 2 characters" in t.answer(PROMPT, "Ada Lovelace")
    # Email format: invalid first.
    t.answer(PROMPT, "ada-at-example")
    assert "must be a valid email" in t.answer(PROMPT, "ada@example.com")
    # Integer with a range: not a number, too small, not whole, then fine.
    assert "a whole number from 18 to 130" in t.answer(PROMPT, "old")
    assert "expected a number" in t.answer(PROMPT, "12")
    assert "must be at least 18" in t.answer(PROMPT, "36.5")
    assert "expected a whole number" in t.answer(PROMPT, "36")
    # Optional number: skipped with Enter.
    assert "optional, Enter skips" in t.answer(PROMPT, "")
    # Boolean with a default: Enter keeps it.
    assert "Enter keeps: yes" in t.answer(PROMPT, "")
    # Titled enum with a default: chosen by number.
    colours = t.answer(PROMPT, "2")
    assert "1) Red (r)" in colours and "2) Green (g)" in colours and "(default)" in colours
    # Untitled enum: a bad choice, then chosen by value.
    assert "3) large" in t.answer(PROMPT, "huge")
    assert "choose a number from 1 to 3" in t.answer(PROMPT, "medium")
    # Multi-select: too many, then two by number.
    assert "(1 to 2)" in t.answer(PROMPT, "1,2,3")
    assert "choose at most 2" in t.answer(PROMPT, "1, 3")
    # Optional string: skipped; optional string with a default: kept.
    t.answer(PROMPT, "")
    assert "Enter keeps: 2000-01-01" in t.answer(PROMPT, "")
    review = t.answer(REVIEW, "")  # Enter sends
    assert "Colour: Green (g)" in review and "Tags: Ex (x), Zed (z)" in review
    assert "Height: (skipped)" in review and "Subscribe: yes" in review
    assert t.result() == {
        "answer": "Accepted",
        "data": {
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "age": 36,
            "subscribe": True,
            "color": "g",
            "size": "medium",
            "tags": ["x", "z"],
            "born": "2000-01-01",
        },
        "opened": [],
    }


def test_edit_at_review(terminal: Any) -> None:
    t = terminal("form", "small")
    t.answer(START, "")
    t.answer(PROMPT, "Paris")
    t.answer(PROMPT, "1999")
    assert "City: Paris" in t.answer(REVIEW, "e")
    t.answer("Enter for all)? ", "7")  # not a field number
    assert "Type a number from 1 to 2" in t.answer("Enter for all)? ", "1")
    assert "Enter keeps: Paris" in t.answer(PROMPT, "Lyon")
    review = t.answer(REVIEW, "send")
    assert "City: Lyon" in review and "Year: 1999" in review
    assert t.result()["data"] == {"city": "Lyon", "year": 1999}


def test_decline_at_start_and_at_review(terminal: Any) -> None:
    t = terminal("form", "small")
    t.answer(START, "d")
    assert t.result() == {"answer": "Declined", "data": None, "opened": []}
    t = terminal("form", "small")
    t.answer(START, "")
    t.answer(PROMPT, "Paris")
    t.answer(PROMPT, "1999")
    t.answer(REVIEW, "d")
    assert t.result()["answer"] == "Declined"


def test_cancel_at_review(terminal: Any) -> None:
    t = terminal("form", "small")
    t.answer(START, "")
    t.answer(PROMPT, "Paris")
    t.answer(PROMPT, "1999")
    t.answer(REVIEW, "c")
    assert t.result()["answer"] == "Cancelled"


def test_ctrl_d_cancels(terminal: Any) -> None:
    t = terminal("form", "small")
    t.answer(START, "")
    t.expect(PROMPT)
    t.type(CTRL_D)
    assert t.result() == {"answer": "Cancelled", "data": None, "opened": []}


def test_ctrl_c_cancels(terminal: Any) -> None:
    t = terminal("form", "small")
    t.answer(START, "")
    t.answer(PROMPT, "Paris")
    t.expect(PROMPT)
    t.type("19" + CTRL_C)
    assert t.result()["answer"] == "Cancelled"


def test_ctrl_c_cancels_in_the_async_handler(terminal: Any) -> None:
    """`ask` runs the dialog in a worker thread, where a SIGINT could not reach it; ^C still cancels."""
    t = terminal("async-form", "-")
    assert "async-server asks" in t.expect(START)
    t.type(CTRL_C)
    assert t.result()["answer"] == "Cancelled"


def test_async_handler_answers_a_form(terminal: Any) -> None:
    t = terminal("async-form", "-")
    t.answer(START, "")
    t.answer(PROMPT, "Oslo")
    t.answer(PROMPT, "2024")
    t.answer(REVIEW, "s")  # s still sends
    assert t.result()["data"] == {"city": "Oslo", "year": 2024}


# -- yes/no confirmations: one answer ---------------------------------------------------------------


def test_confirmation_takes_one_answer(terminal: Any) -> None:
    """The form `ctx.confirm` sends, as the client parses it: the message, then one y/n prompt, and done."""
    t = terminal("confirm", "ctx")
    seen = t.answer(YES_NO, "y")
    assert "projects asks" in seen and "Delete project apollo? This cannot be undone." in seen
    assert "Confirm? [y]es / [n]o: " in seen and "d declines, c or Ctrl-D cancels" in seen
    assert t.result() == {"answer": "Accepted", "data": {"confirm": True}, "opened": []}
    assert t.screen.count("[y]es / [n]o") == 1, "one prompt, one answer"
    assert "[a]nswer" not in t.screen and "Enter sends" not in t.screen and "Sent: yes." in t.screen


def test_confirmation_no_and_enter_without_a_default(terminal: Any) -> None:
    t = terminal("confirm", "ctx")
    t.answer(YES_NO, "")  # no default: Enter answers nothing
    assert "Type y or n" in t.answer(YES_NO, "maybe")
    t.answer(YES_NO, "n")
    assert t.result() == {"answer": "Accepted", "data": {"confirm": False}, "opened": []}


@pytest.mark.parametrize(
    ("which", "prompt", "data"), [("yes", "Enter = yes: ", {"go": True}), ("no", "Enter = no: ", {"subscribe": False})]
)
def test_confirmation_enter_takes_the_default(terminal: Any, which: str, prompt: str, data: dict[str, bool]) -> None:
    t = terminal("confirm", which)
    seen = t.answer(prompt, "")
    if which == "yes":
        assert "It is safe." in seen and "Go ahead? [y]es / [n]o, Enter = yes: " in seen  # no doubled "?"
    else:
        assert "Subscribe? [y]es / [n]o, Enter = no: " in seen
    assert t.result() == {"answer": "Accepted", "data": data, "opened": []}


@pytest.mark.parametrize(
    ("keys", "answer"),
    [("d" + ENTER, "Declined"), ("c" + ENTER, "Cancelled"), (CTRL_D, "Cancelled"), (CTRL_C, "Cancelled")],
)
def test_confirmation_decline_and_cancel(terminal: Any, keys: str, answer: str) -> None:
    t = terminal("confirm", "ctx")
    t.expect(YES_NO)
    t.type(keys)
    assert t.result() == {"answer": answer, "data": None, "opened": []}


def test_confirmation_drops_keys_typed_before_it(terminal: Any) -> None:
    """A `y` typed before the question appeared does not answer it."""
    t = terminal("confirm", "ctx")
    t.type("y" + ENTER)  # at once, while the program is still starting
    t.expect(YES_NO)
    assert "Sent" not in t.idle(), "typeahead answered the confirmation"
    t.type("n" + ENTER)
    assert t.result()["data"] == {"confirm": False}


def test_confirmation_through_the_async_handler(terminal: Any) -> None:
    t = terminal("async-confirm", "-")
    assert "async-server asks" in t.answer(YES_NO, "yes")
    assert t.result()["data"] == {"confirm": True}


# -- the review: only when there is something to review ---------------------------------------------


def test_one_field_form_is_sent_without_a_review(terminal: Any) -> None:
    t = terminal("form", "one")
    t.answer(START, "")
    t.answer(PROMPT, "Paris")
    assert t.result() == {"answer": "Accepted", "data": {"city": "Paris"}, "opened": []}
    assert "Review your answers" not in t.screen and "Sent." in t.screen


def test_one_secret_looking_field_is_still_reviewed(terminal: Any) -> None:
    t = terminal("form", "secret-one")
    t.answer(START, "")
    assert "looks like a request for a secret" in t.answer(PROMPT, "1234-5678")
    assert "Recovery code: 1234-5678" in t.answer(REVIEW, "d")
    assert t.result()["answer"] == "Declined"


def test_enters_typed_ahead_stop_at_the_review(terminal: Any) -> None:
    """Enter sends at the review, but not an Enter typed before the review was shown."""
    t = terminal("form", "small")
    t.expect(START)
    t.type(ENTER + "Paris" + ENTER + "1999" + ENTER + ENTER)
    t.expect(REVIEW)
    assert "Sent" not in t.idle(), "an Enter typed ahead sent the form"
    t.type(ENTER)
    assert t.result()["data"] == {"city": "Paris", "year": 1999}


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(document.cookie)", "'javascript:' addresses can run code"),
        ("https://accounts.example.com@evil.example/login", "browsers ignore that part and go to evil.example"),
    ],
)
def test_dangerous_url_is_refused_without_a_prompt(terminal: Any, url: str, why: str) -> None:
    t = terminal("url", url)
    shown = t.expect("will not be opened")
    assert url in shown and why in shown
    assert t.result() == {"answer": "Declined", "data": None, "opened": []}
    assert "[o]pen" not in t.screen


def test_safe_url_consent_open_then_done(terminal: Any) -> None:
    url = "https://mcp.example.com/connect?t=abc"
    t = terminal("url", url)
    shown = t.expect(CONSENT)
    assert f"Address: {url}" in shown
    assert "Site:    example.com" in shown
    assert "Nothing has been opened" in shown
    # The registrable domain is highlighted (underlined) in the raw output.
    assert "\x1b[1;4;36mexample.com\x1b[0m" in t.raw.decode()
    t.type("o" + ENTER)
    t.answer(DONE, "d")
    assert t.result() == {"answer": "Accepted", "data": None, "opened": [url]}


def test_url_warnings_are_shown_and_cancel_after_opening(terminal: Any) -> None:
    url = "https://xn--pple-43d.com:8443/connect"
    t = terminal("url", url)
    shown = t.expect(CONSENT)
    assert "imitates the plain name 'apple'" in shown
    assert "unusual port 8443" in shown
    t.type("yes" + ENTER)
    t.answer(DONE, "c")
    assert t.result() == {"answer": "Cancelled", "data": None, "opened": [url]}


def test_safe_url_declined_never_opens(terminal: Any) -> None:
    t = terminal("url", "https://mcp.example.com/connect")
    t.answer(CONSENT, "")  # Enter alone is not consent
    assert "Type o to open" in t.answer(CONSENT, "d")
    assert t.result() == {"answer": "Declined", "data": None, "opened": []}


def test_url_question_through_the_async_handler(terminal: Any) -> None:
    url = "https://mcp.example.com/connect"
    t = terminal("async-url", url)
    assert "async-server asks you to open a web page" in t.answer(CONSENT, "o")
    t.answer(DONE, "done")
    assert t.result() == {"answer": "Accepted", "data": None, "opened": [url]}


def test_plain_streams_escape_server_text_and_cancel_at_end_of_input() -> None:
    """Without a terminal (pipes, StringIO) the renderer reads lines; end of input cancels."""
    import io

    from baton.forms import Cancelled, FormSpec, StringField
    from baton.render import TerminalRenderer

    out = io.StringIO()
    form = FormSpec([StringField("city", title="City\x1b[2J\u202e")])
    renderer = TerminalRenderer(io.StringIO("\n"), out, color=False)
    assert renderer.ask_form("Hello\x1b]0;owned\x07 there", form, "srv\x1b[31m") == Cancelled()
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\u001b]0;owned\\u0007" in text and "City\\u001b[2J\\u202e" in text


@pytest.mark.parametrize(
    ("name", "warned"),
    [
        ("api_key", True),
        # Missed before: the renderer's own pattern did not know these, which the form guard refuses.
        ("pin", True),
        ("otp", True),
        ("passcode", True),
        ("api.key", True),
        ("iban", True),
        ("ssn_last4", True),
        # Warned about before: a word that only begins like a secret.
        ("max_tokens", False),
        ("tokenizer", False),
        ("secretary", False),
    ],
)
def test_secret_warning_uses_the_form_guards_rule(name: str, warned: bool) -> None:
    """The warning next to a field comes from `baton.forms.secret_names`, as the form guard's refusal does."""
    import io

    from baton.forms import FormSpec, StringField
    from baton.render import TerminalRenderer

    out = io.StringIO()
    TerminalRenderer(io.StringIO("\n"), out, color=False).ask_form("Hello", FormSpec([StringField(name)]))
    assert ("looks like a request for a secret" in out.getvalue()) is warned


def test_a_log_line_during_a_question_waits_until_the_question_is_answered() -> None:
    """A program's log lines never land inside an open prompt (protocol.md P92): held, then written."""
    import io
    import logging

    from baton.forms import Accepted, FormSpec, StringField
    from baton.render import TerminalRenderer

    out = io.StringIO()
    logger = logging.getLogger("test.between.dialogs")

    class Typing(io.StringIO):
        def readline(self, *args: Any) -> str:
            logger.warning("the server logged this while you typed")  # mid-question
            return super().readline(*args)

    renderer = TerminalRenderer(stdin=Typing("\nAda\n"), stdout=out, color=False)  # Enter = answer, then Ada
    handler = renderer.log_handler(stream=out)
    handler.setFormatter(logging.Formatter("LOG %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    try:
        renderer.between_dialogs("LOG before any question", stream=out)
        answer = renderer.ask_form("Your name?", FormSpec([StringField("name")]))
    finally:
        logger.removeHandler(handler)
    assert answer == Accepted({"name": "Ada"})
    text = out.getvalue()
    assert text.index("LOG before any question") < text.index("Your name?")
    held = text.index("LOG the server logged this while you typed")
    assert held > text.rindex("name")  # after the whole dialog, not inside its prompt
    assert text.rstrip().endswith("LOG the server logged this while you typed")


NOISY = """
import logging
import threading
import time

from baton.forms import FormSpec, StringField
from baton.render import TerminalRenderer

renderer = TerminalRenderer()
log = logging.getLogger("noisy")
log.addHandler(renderer.log_handler())
log.setLevel(logging.INFO)
log.propagate = False


def noise() -> None:
    for i in range(10_000):
        log.info("LOG line %d", i)
        time.sleep(0.05)


threading.Thread(target=noise, daemon=True).start()
time.sleep(0.3)
print("ANSWER", renderer.ask_form("Your name?", FormSpec([StringField("name")])))
time.sleep(0.3)
"""


@pytest.mark.process
def test_log_lines_from_another_thread_never_land_inside_an_open_prompt_on_a_real_terminal() -> None:
    """A program that logs twenty lines a second while a person answers on a pty (protocol.md P92): nothing
    between the question's first line and the answer, every held line written after it."""
    term = support.terminal.Terminal([sys.executable, "-c", NOISY])
    try:
        assert "LOG line 0" in term.expect("Your name?")  # logged before the question, shown at once
        term.expect("(Enter = answer): ")
        assert "LOG" not in term.idle(1.0)  # twenty lines were logged meanwhile, none shown
        term.type(ENTER)
        term.expect("name")
        assert "LOG" not in term.idle(0.5)
        term.type("Ada" + ENTER)
        assert "LOG" not in term.expect("Sent.")  # the dialog's last line
        held = [int(n) for n in re.findall(r"LOG line (\d+)\n", term.expect("ANSWER Accepted"))]
        assert len(held) >= 20 and held == sorted(held)  # then the held lines, in order
        assert term.wait() == 0
    finally:
        term.close()
