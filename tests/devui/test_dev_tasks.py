"""`baton dev` shows a task on the call's timeline (protocol.md P173): the page's client declares the Tasks
extension, follows the task the server makes, and each status of the task is an event of the call."""

from __future__ import annotations

import pytest
from support.dev import baton_dev
from test_dev_cli import EVERYTHING, ask, events_until


@pytest.mark.process
def test_a_call_that_becomes_a_task_shows_its_statuses_on_the_timeline() -> None:
    with baton_dev(EVERYTHING) as dev:
        events_until(dev, lambda e: e.get("type") == "lists")
        headers = {
            "Host": f"127.0.0.1:{dev.port}",
            "Origin": dev.origin,
            "Content-Type": "application/json",
            "X-Baton-Dev-Token": dev.token,
        }
        body = b'{"kind": "tool", "name": "slow_compute", "values": {"seconds": "0.3", "label": "dev"}}'
        status, answer = ask(dev.port, "POST", "/api/call", headers, body)
        assert status == 200, answer
        seen = events_until(dev, lambda e: e.get("type") == "done")
    tasks = [e for e in seen if e.get("type") == "task"]
    assert tasks[0]["status"] == "working" and tasks[-1]["status"] == "completed", seen
    results = [e for e in seen if e.get("type") == "result"]
    assert results and "dev: done after 0.3s" in str(results[-1]), results
