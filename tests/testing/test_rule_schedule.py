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


# What the proxy's faults show as. For S2S and Durable Streams the readers wait for the close
# only where a MUST requires it (a terminal frame with the request body still open; an HTTP/1.1
# response saying Connection: close, or an invalid Content-Length).
KEPT_OPEN = "connection closed after a fatal error"
# Rules where the proxy's kept-open connection must show: some case of theirs requires closing.
MUST_CLOSE_RULES = {
    "s2s": ["malformed: framing", "malformed: protobuf", "malformed: append rules"],
    "durable": ["malformed: HTTP framing"],
}


def _check(report: live.Report, protocol: str) -> None:
    summary = report.summary()
    assert report.not_reached == [], summary
    assert "every rule ran at least once" in summary
    assert all(stats.runs for stats in report.rules.values())
    checks = {check for check, _ in report.findings}
    assert KEPT_OPEN in checks, summary
    for rule in MUST_CLOSE_RULES.get(protocol, []):
        assert report.rules[rule].checks[KEPT_OPEN], (rule, summary)
    assert not report.ok


def test_a_short_s3p_run_reaches_every_rule_and_finds_the_fault() -> None:
    report = _run("s3p", 4.0)
    _check(report, "s3p")
    assert len(report.rules) == 14  # 8 malformed families, 5 commands, the edge cases


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_20_s_run_reaches_every_rule_and_finds_the_fault(protocol: str) -> None:
    _check(_run(protocol, 20.0), protocol)


@pytest.mark.parametrize("protocol", ["s2s", "durable"])
def test_a_clean_http_server_closes_where_it_must(protocol: str) -> None:
    """No finding against the example server alone: the close waited for does come."""
    with example_server(protocol) as port:
        report = live.fuzz(make_target(protocol), "127.0.0.1", port, seconds=1.5, seed=1)
    assert report.ok, report.summary()
    assert report.not_reached == [], report.summary()


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
