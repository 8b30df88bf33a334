"""The child side of `baton install`'s start-up check (`baton.install.check`): `python -m
baton.install.check_child FILE[:ATTR]`, run in the environment the host will give the entry, loads the server,
runs `baton serve --stdio`'s start-up checks and prints one JSON object on stdout: `{"name": NAME}`,
`{"refused": WHY}` (a check failed) or `{"unloadable": WHY}` (the file cannot be loaded). Whatever the
server's module prints goes to stderr, as under `baton serve --stdio`.
"""

from __future__ import annotations

import json
import sys

from ..serve.run import ready
from ..serve.target import TargetError, load_server


def main(target: str) -> int:
    answer, sys.stdout = sys.stdout, sys.stderr
    try:
        server = load_server(target)
    except TargetError as exc:
        result = {"unloadable": str(exc)}
    else:
        refusal = ready(server, "stdio")
        result = {"refused": refusal} if refusal else {"name": server.name}
    answer.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
