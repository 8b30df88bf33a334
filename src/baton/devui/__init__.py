"""`baton dev`: see and drive any MCP server's flows in the browser, served by Baton itself.

`target` says what to connect to, `session` drives it with Baton's `Client` and keeps the events the
page is built from, `arguments` builds the argument forms, `masking` hides credentials in what is
shown, `guard` admits only the page `baton dev` printed, `app` is the page's ASGI app, `run` puts it on
127.0.0.1 and stops it cleanly, and `static/` holds the page (plain HTML, CSS and JavaScript: no build).
"""

from .guard import DevGuard
from .run import PortTaken, bind, run
from .session import DevSession
from .target import DevTarget, DevTargetError, parse_target

__all__ = ["DevGuard", "DevSession", "DevTarget", "DevTargetError", "PortTaken", "bind", "parse_target", "run"]
