"""The provenance of every rule, setting, metric and text, collected per family and per sweep, and rendered.

Each item is declared next to itself (``games.provenance``): a family's rules in its engine's
``PROTOCOL``, its settings on its config's fields, its metrics in its metrics module's ``METRICS``,
its texts where ``texts()`` renders them; the loop's and the replay's rules in ``play``. This module
only collects those declarations (``family_items``, ``game_items``, ``sweep_items``) and renders them
(``markdown``, ``html``), so the README's table, the dataset card and the report never write one twice.
``python -m bargain_ray.analysis.provenance`` prints the README's family table.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from html import escape
from itertools import groupby
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.config import choices, compose_dict
from bargain_ray.design.fingerprint import game_part
from bargain_ray.games import family, load_game, names
from bargain_ray.games.base import Game
from bargain_ray.games.kit.wording import framed
from bargain_ray.games.provenance import OURS, Declared, Provenance, Scenario, Setting, mixed, opening, ours, rule, seed
from bargain_ray.play.loop import PROTOCOL as LOOP
from bargain_ray.play.rescore import PROTOCOL as REPLAY
from bargain_ray.store.manifest import Manifest

Kind = Literal["rule", "setting", "metric", "text"]
SHARED = "every family"
"""The family column of the rules the loop and the replay apply to every family, and of the sweep's layout."""

LAYOUT: tuple[Declared, ...] = (
    rule("unit_id", "unit ids read <prefix>-<experiment>-<created>-b<block>-p<position>-<pairing>-a<assignment>",
         seed("001", "negotiation-c3rep40-20261027-b04-p04-oo-a3")),
    rule("block_order", "each block lays its cells out in a shuffle seeded by the grid seed and the block",
         ours("seed 001 shows one position, not the shuffle behind it: ours puts HO-a3, not OO-a3, at b04-p04")),
    rule("common_random_numbers", "every cell of a block plays the block's seed",
         seed("002", "Every cell plays the **same** 30 valuation draws")),
    rule("raw_logs", "the dataset's raw logs: raw/{cell}_s{seed}.jsonl, a header, the turns, a result",
         seed("002", "Raw transcripts live in `raw/` as 240 JSONL files, one per game, named `{cell}_s{seed}.jsonl`.")),
    rule("spec", "the dataset's spec copy is spec/manifest.json, the sweep's manifest copied",
         mixed(seed("002", "`spec/full.json` is the spec copy written at execution time"),
               ours("our copy is the sweep folder's manifest.json, named so, not seed 002's spec/full.json"))),
)
"""The sweep's layout and the dataset's, as the design and the export lay them out, with their sources."""


class MissingProvenance(TypeError):
    """An item declares no source."""


class Item(BaseModel):
    """One row of a provenance table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    game: str | None = None
    """The game config a text or a setting's value belongs to (None: the family's, whatever the config)."""
    condition: str | None = None
    kind: Kind
    name: str
    what: str
    value: str | None = None
    """A setting's value in the sweep (JSON), when it is collected for one."""
    default: str | None = None
    """A setting's default (JSON): what its provenance speaks of."""
    provenance: Provenance


def _declared(family_name: str, kind: Kind, items: tuple[Declared, ...]) -> list[Item]:
    return [Item(family=family_name, kind=kind, name=d.name, what=d.what, provenance=d.provenance) for d in items]


def family_items(cls: type[Game]) -> list[Item]:
    """A family's rules and metrics: the same under every config of the family."""
    metrics = [Item(family=cls.family, kind="metric", name=name, what=m.meaning, provenance=m.provenance)
               for name, m in cls.metrics.METRICS.items()]
    return [*_declared(cls.family, "rule", cls.rules()), *metrics]


def shared_items() -> list[Item]:
    """The rules every family is played and replayed by, and the sweep's layout."""
    return [*_declared(SHARED, "rule", LOOP), *_declared(SHARED, "rule", REPLAY),
            *_declared(SHARED, "rule", LAYOUT)]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def settings(game: Game, name: str | None = None, condition: str | None = None) -> list[Item]:
    """Every field of a game's config as a setting, with its value, its default and its default's provenance
    (a scenario field takes the config's ``source``); ``MissingProvenance`` names a field that declares none."""
    config = game.config
    values = config.model_dump(mode="json")
    brief = next(t.text for n, t in sorted(game.texts().items()) if n.startswith("brief:"))
    out = []
    for field, info in type(config).model_fields.items():
        if field == "family":
            continue  # the discriminator that names the family, not a setting
        marks = [m for m in info.metadata if isinstance(m, Setting | Scenario)]
        if not marks:
            raise MissingProvenance(f"{type(config).__name__}.{field} declares no provenance: annotate it with "
                                    "Setting(seed(...) or ours(...)) or Scenario(...)")
        mark = marks[0]
        if isinstance(mark, Scenario):
            provenance = framed(values.get("source", "ours"), mark.shows(config) or brief,
                                f"scenario {config.name}'s data is ours")
            out.append(Item(family=game.family, game=name, condition=condition, kind="setting", name=field,
                            what=mark.what, value="(scenario data)", provenance=provenance))
            continue
        default = None if info.is_required() else _json(info.get_default(call_default_factory=True))
        out.append(Item(family=game.family, game=name, condition=condition, kind="setting", name=field,
                        what=info.description or "", value=_json(values[field]),
                        default=default, provenance=mark.provenance))
    return out


def _short(text: str, limit: int = 90) -> str:
    line = opening(text, limit)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def texts(game: Game, name: str | None = None, condition: str | None = None) -> list[Item]:
    """Every text a model can read under the game's config, with its provenance."""
    return [Item(family=game.family, game=name, condition=condition, kind="text", name=text_name,
                 what=_short(t.text), provenance=t.provenance) for text_name, t in game.texts().items()]


SILENCE = ours("the no-communication condition is a control no seed runs: what its wording drops from the talking "
               "game's and adds is ours")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def silence_changes(game: Game, name: str | None = None, condition: str | None = None) -> list[Item]:
    """Under the no-talk condition (``messages: false``), one item: each text whose words differ from the talking
    game's, with the sentences it drops and the sentences it adds (all of them ours); none otherwise."""
    config = game.config.model_dump(mode="json")
    if config.get("messages", True):
        return []
    said = load_game(config | {"messages": True}).texts()
    changes = []
    for key, quiet in game.texts().items():
        a, b = _sentences(said[key].text), _sentences(quiet.text)
        edits = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
        words = [*(f"drops “{s}”" for _, i1, i2, _, _ in edits for s in a[i1:i2]),
                 *(f"adds “{s}”" for _, _, _, j1, j2 in edits for s in b[j1:j2])]
        if words:
            changes.append(f"{key} " + ", ".join(words))
    return [Item(family=game.family, game=name, condition=condition, kind="text", name="no-talk wording",
                 what="; ".join(changes), provenance=SILENCE)] if changes else []


def game_items(game: Game, name: str | None = None, condition: str | None = None) -> list[Item]:
    """A game config's settings and texts, and under the no-talk condition what its texts change."""
    return [*settings(game, name, condition), *texts(game, name, condition), *silence_changes(game, name, condition)]


def sweep_items(manifest: Manifest) -> list[Item]:
    """Every item that determined a sweep's games: the shared rules, each family's rules and metrics, and each
    game config's settings (with the sweep's values) and texts, as the manifest fixed them."""
    out = shared_items()
    seen: set[str] = set()
    for game_name, condition in manifest.game_conditions():
        part = game_part(manifest.components, game_name, condition)
        if not part or not part.get("config"):
            continue
        game = load_game(part["config"])
        if game.family not in seen:
            seen.add(game.family)
            out += family_items(type(game))
        out += game_items(game, game_name, condition)
    return out


def unstated_settings(items: list[Item]) -> list[Item]:
    """The settings no seed states, in whole or in part (the rules and values that are ours, each a setting with a
    default), with their values in the sweep; scenario data aside (its source is the scenario's)."""
    return [i for i in items if i.kind == "setting" and i.provenance.ours and i.default is not None]


def settings_off_default(items: list[Item]) -> list[Item]:
    """The settings whose value in the sweep is not their declared default (what the card should point out)."""
    return [i for i in items if i.kind == "setting" and i.default is not None and i.value != i.default]


# --- rendering ---------------------------------------------------------------------------------------------

def _collapsed(items: list[Item]) -> list[tuple[Item, int]]:
    """Runs of items alike but for their name's tail (``rule:*`` sentences of one family) as one row and its count."""
    def key(i: Item) -> tuple[Any, ...]:
        head = i.name.split(":", 1)[0] if ":" in i.name else i.name
        return i.family, i.game, i.condition, i.kind, head, i.provenance, i.value is None

    rows = []
    for _, run in groupby(items, key=key):
        group = list(run)
        first = group[0]
        if len(group) > 1 and ":" in first.name:
            first = first.model_copy(update={"name": first.name.split(":", 1)[0] + ":*", "what": ", ".join(
                i.name.split(":", 1)[1] for i in group)})
        rows.append((first, len(group)))
    return rows


def _words(p: Provenance) -> str:
    """The seed's words and why ours, as one cell."""
    parts = [f"“{p.quote}”"] if p.quote else []
    return " ".join([*parts, *([f"ours: {p.reason}"] if p.reason else [])])


def _cells(item: Item, count: int, with_values: bool, source: str | None = None) -> list[str]:
    name = item.name if count == 1 else f"{item.name} ({count})"
    where = item.game + (f" / {item.condition}" if item.condition else "") if item.game else item.family
    cells = [where, item.kind, name, item.what]
    if with_values:
        value = item.value or ""
        cells.append(value if item.default in (None, item.value) else f"{value} (default {item.default})")
    return [*cells, source or item.provenance.source, _words(item.provenance)]


def _bold_ours(source: str) -> str:
    """A source as Markdown, ours in bold (``seed 004 + **ours**``): how a table marks what no seed gives."""
    return " + ".join(f"**{part}**" if part == OURS else part for part in source.split(" + "))


def _header(with_values: bool) -> list[str]:
    return ["where", "kind", "item", "what", *(["value"] if with_values else []), "source",
            "the seed's words / why ours"]


def markdown(items: list[Item], values: bool = False) -> str:
    """A Markdown table of ``items`` (``values``: a column with each setting's value in the sweep); the source of
    a row that is ours is in bold."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    header = _header(values)
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in _cells(i, n, values, _bold_ours(i.provenance.source))) + " |"
              for i, n in _collapsed(items)]
    return "\n".join(lines)


def html(items: list[Item], values: bool = False) -> str:
    """An HTML table of ``items``; a row that is ours carries ``class="ours"``, so a page can mark it."""
    head = "".join(f"<th>{escape(h)}</th>" for h in _header(values))
    rows = []
    for item, count in _collapsed(items):
        cls = ' class="ours"' if item.provenance.ours else ""
        rows.append(f"<tr{cls}>" + "".join(f"<td>{escape(c)}</td>" for c in _cells(item, count, values)) + "</tr>")
    return f'<table class="provenance"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def summary(items: list[Item]) -> str:
    """A short Markdown table: per family (or game config), kind and source, the items it holds. The full table
    (``markdown``) gives each item's quote or reason."""
    def where(i: Item) -> str:
        return i.game or i.family

    def listed(names: list[str]) -> str:
        heads = [n.split(":", 1)[0] for n in names if ":" in n]
        many = {h for h in heads if heads.count(h) > 2}  # e.g. every rule sentence: rule:* (14)
        shown = [f"{n.split(':', 1)[0]}:* ({heads.count(n.split(':', 1)[0])})"
                 if ":" in n and n.split(":", 1)[0] in many else n for n in names]
        return ", ".join(dict.fromkeys(shown))

    rows: dict[tuple[str, str, str], list[str]] = {}
    for i in items:
        rows.setdefault((where(i), i.kind, i.provenance.source), []).append(i.name)
    lines = ["| where | kind | source | items |", "| --- | --- | --- | --- |"]
    lines += [f"| {w} | {k} | {src} | {listed(n)} |" for (w, k, src), n in rows.items()]
    return "\n".join(lines)


def readme_items() -> list[Item]:
    """What the README's family table lists: the shared rules, each family's rules and metrics, and the settings
    and texts of every shipped game config (``conf/game/*.yaml``) as written."""
    out = shared_items()
    games = [load_game(compose_dict(f"game/{g}")["game"]) for g in choices("game")]
    for name in names():
        out += family_items(family(name).GAME)
        for game in (g for g in games if g.family == name):
            out += game_items(game, game.config.name)
    return out


def readme_table() -> str:
    """The README's family provenance table, in Markdown: the summary of every family's items by source."""
    return summary(readme_items())


if __name__ == "__main__":
    sys.stdout.write(readme_table() + "\n")
