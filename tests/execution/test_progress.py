"""The terminal bar: its count, its clock and its postfix of calls, 429s and spend (no Ray needed)."""

from __future__ import annotations

from helpers import game_config, play_replies

from bargain_ray.core.records import GameRecord
from bargain_ray.execution.progress import SweepBar, Tally


def paid_game(unit_id: str, errors: list[str]) -> GameRecord:
    """A real (format-failed) game whose three calls are made paid calls of one model, the first with ``errors``."""
    record = play_replies(game_config("tickets"), ["not json"] * 3)
    calls = [c.model_copy(update={"provider": "anthropic", "model": "claude-x", "cost_usd": 0.25, "unit_id": unit_id,
                                  "attempt_errors": errors if i == 0 else []})
             for i, c in enumerate(record.calls)]
    return record.model_copy(update={"calls": calls, "unit": record.unit.model_copy(update={"unit_id": unit_id})})


def test_the_bar_counts_games_429s_and_spend_and_starts_its_clock_at_the_first_game(capsys) -> None:
    bar, tally = SweepBar(total=3, enabled=True), Tally()
    first = [paid_game("u1", ["Error code: 429 - rate limited", "Timeout"])]
    for record in first:
        tally.add(record)
    bar.show(first, tally)
    assert bar.bar.n == 1 and bar.bar.initial == 1, "the first games are counted, not timed"
    more = [paid_game("u2", ["RateLimitError: slow down"]), paid_game("u3", [])]
    for record in more:
        tally.add(record)
    bar.show(more, tally)
    assert bar.bar.n == 3 and bar.rate_limited == 2
    assert bar.bar.postfix == "agree=0 unknown=0 calls=9 429s=2 claude-x $2.25"
    bar.close()
    shown = capsys.readouterr().err.split("\r")[-1]
    assert "3/3" in shown and "429s=2 claude-x $2.25" in shown, shown
