"""A tool with an app page (MCP Apps, docs/apps.md): hosts that render apps show the dice; others read the text.

Run it:   baton serve examples/dice_app.py --http 127.0.0.1:3102
Or see the page itself in `baton dev examples/dice_app.py`.

The page is `dice_app.html`, beside this file: plain HTML and JavaScript speaking the app protocol to the
host. Its "Roll again" button calls `roll_dice` through the host, which is why the tool is visible to both
the model and the app (the default).
"""

from __future__ import annotations

import secrets

from baton import App, Server, ToolError, ToolResult, content

server = Server("dice", "0.1.0")

DICE = App("ui://dice/roll.html", path="dice_app.html", title="Dice", prefers_border=True)


@server.tool(app=DICE)
def roll_dice(count: int = 2, sides: int = 6) -> ToolResult:
    """Roll `count` dice of `sides` sides each; the host may show the roll in the dice app."""
    if not 1 <= count <= 10 or not 2 <= sides <= 100:
        raise ToolError("roll 1 to 10 dice of 2 to 100 sides")
    dice = [secrets.randbelow(sides) + 1 for _ in range(count)]
    total = sum(dice)
    # The text is what a host without apps shows, and what the model reads in every host.
    said = f"Rolled {', '.join(map(str, dice))}: total {total}."
    return ToolResult(content=[content.text(said)], structured={"dice": dice, "total": total})
