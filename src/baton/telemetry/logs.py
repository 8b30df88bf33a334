"""Structured logs on stderr: `text` (the default) or `json`, one object a line (protocol.md P65).

`baton serve --log-format json` or `BATON_LOG_FORMAT=json`; the documented replacement for the
deprecated `logging/setLevel`: operators read the server's own logs, not a client. In JSON every line is
JSON: Baton's loggers, uvicorn's (`uvicorn_config`) and `baton serve`'s own lines (`line`), in the one
process and in each `--workers` process. A JSON line names
the trace and span it was written in when telemetry is on, so logs join traces.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Literal

LOG_FORMAT_ENV = "BATON_LOG_FORMAT"
HANDLER_LOGGER = "baton.handler"
"""The logger of handlers' `ctx.log` lines: at info under `baton serve` unless `--log-level` says (P129)."""
FORMATS = ("text", "json")
LogFormat = Literal["text", "json"]


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (RFC 3339, UTC), level, logger, message, exception (a failure's traceback,
    kept for the operator: protocol.md P79); trace_id and span_id when a span is current."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import orjson  # noqa: PLC0415 (with the first JSON formatter: `baton`'s parser imports this module)

        self._dumps = orjson.dumps

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        trace = sys.modules.get("opentelemetry.trace")  # never imported here: only if telemetry is on
        if trace is not None:
            sc = trace.get_current_span().get_span_context()
            if sc.is_valid:
                line["trace_id"] = f"{sc.trace_id:032x}"
                line["span_id"] = f"{sc.span_id:016x}"
        return self._dumps(line, default=str).decode()


def log_format(flag: str | None) -> LogFormat:
    """The format asked for: the flag, else `$BATON_LOG_FORMAT`, else text (an unknown value is refused)."""
    chosen = (flag or os.environ.get(LOG_FORMAT_ENV) or "text").strip().lower()
    if chosen not in FORMATS:
        raise ValueError(f"{LOG_FORMAT_ENV} / --log-format is text or json, not {chosen!r}")
    return "json" if chosen == "json" else "text"


def uvicorn_config(level: str) -> dict[str, Any]:
    """uvicorn's `log_config` for JSON lines: its own loggers (`uvicorn.error`, `uvicorn.access`) through
    `JsonFormatter` on stderr, in the one process and in every `--workers` process."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"json": handler},
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": level.upper(), "propagate": False},
            "uvicorn.access": {"handlers": ["json"], "level": level.upper(), "propagate": False},
        },
    }


def line(message: str, level: str, fmt: LogFormat) -> str:
    """One line `baton serve` writes to stderr itself, whatever the log level (where it serves, why it refuses):
    `baton serve: message` in text, a JSON object of the `baton.serve` logger in JSON."""
    if fmt == "text":
        return f"baton serve: {message}"
    record = logging.makeLogRecord(
        {"name": "baton.serve", "levelname": level, "levelno": logging.getLevelName(level), "msg": message}
    )
    return JsonFormatter().format(record)


def configure(level: str | None, fmt: LogFormat, text_format: str) -> None:
    """Send log records to stderr at `level` (`--log-level`), as `text_format` lines or JSON lines. Without
    one, warnings and worse, and the handlers' own `ctx.log` lines from info up (protocol.md P129)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(text_format))
    logging.basicConfig(level=(level or DEFAULT_LEVEL).upper(), handlers=[handler])
    if level is None:
        logging.getLogger(HANDLER_LOGGER).setLevel(logging.INFO)


DEFAULT_LEVEL = "warning"
"""Baton's and uvicorn's level when `--log-level` is not given."""
