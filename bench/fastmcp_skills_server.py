"""FastMCP 4.1.6 serving the skills of `examples/skills` (SEP-2640), for bench/skills_reads.py.

Its documented way: a `SkillsDirectoryProvider` over the folder with `experimental_skills=True` (SEP-2640
discovery) and its `SkillsExtension` (`skills/list`, `skills/get`), served stateless with JSON
responses, as `peers/fastmcp_server.py` serves the MRTR tool. Run with FastMCP's venv.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

SKILLS = Path(__file__).resolve().parent.parent / "examples" / "skills"

mcp = FastMCP("fastmcp-skills")
provider = SkillsDirectoryProvider(roots=SKILLS, experimental_skills=True)
mcp.add_provider(provider)
mcp.add_extension(SkillsExtension(providers=[provider]))


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 4.1.6 skills server (127.0.0.1, path /mcp).")
    parser.add_argument("--port", type=int, default=8776, help="TCP port on 127.0.0.1 (default 8776)")
    opts = parser.parse_args()
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=opts.port,
        json_response=True,
        stateless_http=True,
        show_banner=False,
        log_level="WARNING",
    )


if __name__ == "__main__":
    main()
