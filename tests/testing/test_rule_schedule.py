"""The live fuzzer schedules by rule: a short run reaches every rule family of the protocol and
finds a fault injected in front of the protocol's example server (issue 33, part 1).

The fault (``faulty.sloppy_proxy``): the connection stays open after the server ended it on a
fatal error, and answers are swallowed (a hang) once a client sent more than 4 KiB. The main
suite runs S3P for a few seconds; the 20 s runs of all five protocols are marked slow.
"""

from __future__ import annotations

import time

import pytest

from s3p_codec.testing import live
from s3p_codec.testing.command import make_target

from .faulty import sloppy_proxy
from .servers import example_server

PROTOCOLS = ["s3p", "rustlog", "pravega", "s2s", "durable"]


def _run(protocol: str, seconds: float) -> live.Report:
    with example_server(protocol) as port, sloppy_proxy(port) as front:
        began = time.monotonic()
        report = live.fuzz(make_target(protocol), "127.0.0.1", front, seconds=seconds, seed=1)
        took = time.monotonic() - began
    # Past the budget by at most the cases in flight and the final probe (each at most 2 s,
    # the ceiling, plus a confirmation).
    assert took < seconds + 2 * 2.0 + 1.5, took
    return report


# What the proxy's faults show as (the example servers alone have no finding: test_live).
# The Durable Streams and S2S readers take a complete HTTP response (the error, or the session's
# end) as the end of the conversation, so there only the hang shows.
FAULT_CHECKS = {"connection closed after a fatal error", "error reply sent"}


def _check(report: live.Report, protocol: str) -> None:
    summary = report.summary()
    assert report.not_reached == [], summary
    assert "every rule ran at least once" in summary
    assert all(stats.runs for stats in report.rules.values())
    checks = {check for check, _ in report.findings}
    assert checks & FAULT_CHECKS, summary
    if protocol not in ("durable", "s2s"):
        assert "connection closed after a fatal error" in checks, summary
    assert not report.ok


def test_a_short_s3p_run_reaches_every_rule_and_finds_the_fault() -> None:
    report = _run("s3p", 4.0)
    _check(report, "s3p")
    assert len(report.rules) == 14  # 8 malformed families, 5 commands, the edge cases


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_20_s_run_reaches_every_rule_and_finds_the_fault(protocol: str) -> None:
    _check(_run(protocol, 20.0), protocol)


def test_every_rule_runs_once_before_any_runs_twice() -> None:
    target = make_target("rustlog")
    rules = live.rules_of(target)
    scheduler = live._Scheduler(rules, seed=3)
    first = [scheduler.next() for _ in rules]
    assert sorted(name for name, _ in (pick for pick in first if pick)) == sorted(rules)


def test_the_report_names_the_rules_a_run_did_not_reach() -> None:
    report = live.Report("s3p", "127.0.0.1:1", 0, 1.0)
    report.rules = {"malformed: a": live.RuleStats(runs=2), "valid: b": live.RuleStats()}
    assert report.not_reached == ["valid: b"]
    assert "NOT REACHED (1): valid: b" in report.summary()
    assert report.to_json()["rules_not_reached"] == ["valid: b"]


def test_a_target_without_rules_has_two() -> None:
    class Plain:
        def __getattr__(self, name: str) -> object:
            return getattr(make_target("s3p"), name)

        rules = None

    assert list(live.rules_of(Plain())) == ["malformed", "valid"]  # type: ignore[arg-type]
