"""`baton dev`: see and drive any MCP server's flows in the browser, served by Baton itself.

`dev_target` says what to connect to, `live` drives it with Baton's `Client` and keeps the events the
page is built from, `arguments` builds the argument forms, `masking` hides credentials in what is
shown, `page_access` admits only the page `baton dev` printed, `app` is the page's ASGI app, `run` puts it on
127.0.0.1 and stops it cleanly, and `static/` holds the page (plain HTML, CSS and JavaScript: no build).
"""

from .dev_target import DevTarget, DevTargetError, parse_target
from .live import DevSession
from .page_access import DevGuard
from .run import PortTaken, bind, run

__all__ = ["DevGuard", "DevSession", "DevTarget", "DevTargetError", "PortTaken", "bind", "parse_target", "run"]
