"""How long an MCP Apps page takes to show a tool's result in `baton dev`, in headless Chromium.

    .venv/bin/python bench/app_render.py [--runs N] [--json]

Starts `baton dev examples/dice_app.py --no-browser` on 127.0.0.1, opens its page in Debian's Chromium,
and calls `roll_dice` N times from the page. A script Playwright adds to every document (the page and
each sandboxed app frame) notes, on the browser's wall clock, when the call's Result region is drawn in
the page and when the app page's status first shows the roll. For each call it reports:

- result to app: from the result drawn in the page to the roll drawn in the app (the frame, made when
  the call started, loads its page, initializes, and is sent the input and the result);
- click to result, and click to app: from the click on Call.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
BATON = str(Path(sys.executable).parent / "baton")
ADDRESS = re.compile(rb"baton dev: (http://127\.0\.0\.1:\d+/#token=\S+)")
# In the page: when each call's Result region appears. In an app frame: when its status shows "total".
WATCH = """
(() => {
  const now = () => performance.timeOrigin + performance.now();
  window.__seen = {};
  new MutationObserver(() => {
    for (const region of document.querySelectorAll("article.call section[aria-label=Result]")) {
      const call = region.closest("article").getAttribute("aria-label");
      if (!(call in window.__seen)) window.__seen[call] = now();
    }
    const status = document.querySelector("[role=status]");
    if (status && status.textContent.includes("total") && !("app" in window.__seen)) window.__seen.app = now();
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""


def start_dev() -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [BATON, "dev", "--no-browser", "--port", "0", "examples/dice_app.py"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        found = ADDRESS.search(line)
        if found:
            return proc, found.group(1).decode()
    proc.kill()
    raise SystemExit("baton dev printed no address within 60 s")


def measure(runs: int) -> dict[str, list[float]]:
    proc, address = start_dev()
    figures: dict[str, list[float]] = {"result_to_app_ms": [], "click_to_result_ms": [], "click_to_app_ms": []}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium")
            context = browser.new_context()
            context.add_init_script(WATCH)
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(address)
            item = page.locator("details.item").filter(has=page.get_by_text("roll_dice", exact=True))
            item.locator("summary").first.click()
            for run in range(1, runs + 1):
                clicked = page.evaluate("performance.timeOrigin + performance.now()")
                item.get_by_role("button", name="Call").click()
                page.locator("iframe").nth(run - 1).wait_for(state="attached")  # this call's frame is there
                frame_element = page.locator("iframe").first  # the newest call comes first
                page.frame_locator("iframe").first.get_by_role("status").filter(has_text="total").wait_for()
                src = str(frame_element.get_attribute("src"))
                frame = next(f for f in page.frames if f.url.endswith(src))
                app_at = float(frame.evaluate("window.__seen.app"))
                seen: dict[str, Any] = page.evaluate("window.__seen")
                (result_at,) = [at for label, at in seen.items() if label.startswith(f"Call c{run}:")]
                figures["result_to_app_ms"].append(app_at - result_at)
                figures["click_to_result_ms"].append(result_at - clicked)
                figures["click_to_app_ms"].append(app_at - clicked)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs)
    if args.json:
        print(orjson.dumps(figures).decode())
        return
    for name, values in figures.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
        median = statistics.median(values)
        print(f"{name:20} median {median:7.1f}  p90 {p90:7.1f}  max {max(values):7.1f}  (n={len(values)})")


if __name__ == "__main__":
    main()
