"""What `baton dev` costs a person: start-up, the page's weight, and a two-round flow beside `baton call`.

    .venv/bin/python bench/dev_page.py [--runs N] [--json]

Needs Debian's Chromium (`./dev test` installs it) and Playwright (the dev extra). Every process is on
127.0.0.1 and stopped at the end. It measures, over N runs each:

- start-up: from starting `baton dev examples/everything.py --no-browser` to its printed address,
  and to the tool list shown in headless Chromium (the page loaded, the child server started over
  stdio, listed, and the list drawn);
- the page's transfer size: every byte the browser fetched to show it (HTML, CSS, JavaScript, and the
  event stream up to the drawn list);
- a two-round flow (`test_input_required_result_multi_round`: two questions, one per round) against
  one `baton serve examples/everything.py --http` on loopback, answered at once: in the page, from the
  click on Call to the result drawn; through `baton call` on a pseudo-terminal, from the command's
  start to its exit (so its own start-up is in it, as a person running it meets it).
"""

from __future__ import annotations

import argparse
import http.client
import os
import pty
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from playwright.sync_api import sync_playwright
from processes import servers_environment

ROOT = Path(__file__).resolve().parent.parent
BATON = str(Path(sys.executable).parent / "baton")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ADDRESS = re.compile(rb"baton dev: (http://127\.0\.0\.1:\d+/#token=\S+)")
FLOW = "test_input_required_result_multi_round"
PROMPT = re.compile(rb"\(Enter = answer\): ?(\x1b\[0m)?$|  > ?(\x1b\[0m)?$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_dev(target: str) -> tuple[subprocess.Popen[bytes], str, float]:
    began = time.perf_counter()
    proc = subprocess.Popen(
        [BATON, "dev", "--no-browser", "--port", "0", target],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    printed = time.perf_counter() - began
    match = ADDRESS.search(line)
    if match is None:
        proc.kill()
        raise SystemExit(f"baton dev printed {line!r}")
    return proc, match.group(1).decode(), printed


def stop(proc: subprocess.Popen[Any]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def startup(browser: Any) -> dict[str, float]:
    began = time.perf_counter()
    proc, address, printed = start_dev("examples/everything.py")
    page = browser.new_page()
    sizes: list[int] = []
    page.on("response", lambda r: sizes.append(_size(r)))
    try:
        page.goto(address)
        page.locator("summary", has_text="perform").first.wait_for(timeout=30_000)
        listed = time.perf_counter() - began
    finally:
        page.close()
        stop(proc)
    return {"printed_s": printed, "listed_s": listed, "page_bytes": float(sum(sizes))}


def _size(response: Any) -> int:
    if "/api/events" in response.url:
        return 0  # a stream that never ends: counted by the page below
    try:
        return len(response.body())
    except Exception:
        return 0


def events_bytes(address: str) -> int:
    """Bytes of the event stream up to the drawn lists (the events a page replays when it opens)."""
    port = int(address.split(":")[2].split("/", maxsplit=1)[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/events", headers={"X-Baton-Dev-Token": address.split("token=")[1]})
    response = conn.getresponse()
    size = 0
    try:
        while True:
            line = response.readline()
            size += len(line)
            if not line or b'"type":"lists"' in line:
                return size
    finally:
        conn.close()


def page_flow(browser: Any, address: str) -> float:
    page = browser.new_page()
    try:
        page.goto(address)
        item = page.locator("details.item").filter(has=page.get_by_text(FLOW, exact=True))
        item.locator("summary").first.click()
        began = time.perf_counter()
        item.get_by_role("button", name="Call").click()
        flow = page.get_by_role("article").first
        first = flow.get_by_role("region", name="Question: What is your name?")
        first.get_by_role("textbox").fill("Alice")
        first.get_by_role("button", name="Send").click()
        second = flow.get_by_role("region", name="Question: What is your favorite color?")
        second.get_by_role("textbox").fill("blue")
        second.get_by_role("button", name="Send").click()
        flow.get_by_role("region", name="Result").get_by_text("Alice likes blue").wait_for()
        return time.perf_counter() - began
    finally:
        page.close()


def cli_flow(url: str) -> float:
    """`baton call URL FLOW` on a pseudo-terminal, answered as soon as each prompt shows."""
    answers = [b"\r", b"Alice\r", b"\r", b"blue\r"]
    began = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(BATON, [BATON, "call", url, FLOW])
    screen = b""
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 30)
            if not ready:
                raise SystemExit(f"baton call stalled: {screen[-300:]!r}")
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
            if answers and PROMPT.search(screen):
                os.write(fd, answers.pop(0))
                screen = b""
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0 or answers:
        raise SystemExit(f"baton call failed: {screen[-300:]!r}")
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the Markdown table")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [BATON, "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_port(port)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            starts = [startup(browser) for _ in range(args.runs)]
            proc, address, _ = start_dev(url)
            try:
                stream = events_bytes(address)
                page_flow(browser, address)  # warm: the first call also lists the tools' header params
                in_page = [page_flow(browser, address) for _ in range(args.runs)]
            finally:
                stop(proc)
            browser.close()
        cli_flow(url)
        in_cli = [cli_flow(url) for _ in range(args.runs)]
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=15)
    med = statistics.median
    figures = {
        "runs": args.runs,
        "printed_s": med(s["printed_s"] for s in starts),
        "listed_s": med(s["listed_s"] for s in starts),
        "page_static_bytes": med(s["page_bytes"] for s in starts),
        "events_bytes_to_list": stream,
        "flow_page_s": med(in_page),
        "flow_cli_s": med(in_cli),
    }
    if args.json:
        print(orjson.dumps(figures).decode())
        return
    print(f"| baton dev, median of {args.runs} | |")
    print("| --- | --- |")
    print(f"| start to printed address | {figures['printed_s'] * 1000:.0f} ms |")
    print(f"| start to tool list shown in Chromium | {figures['listed_s'] * 1000:.0f} ms |")
    print(f"| page transfer (HTML, CSS, JS) | {figures['page_static_bytes'] / 1024:.1f} KiB |")
    print(f"| event stream up to the drawn lists (everything.py) | {stream / 1024:.1f} KiB |")
    print(f"| two-round flow in the page (click to result) | {figures['flow_page_s'] * 1000:.0f} ms |")
    print(f"| same flow, `baton call` (start to exit) | {figures['flow_cli_s'] * 1000:.0f} ms |")


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


if __name__ == "__main__":
    with servers_environment():  # its own data directory, not the home one
        main()
