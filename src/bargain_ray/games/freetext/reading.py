"""A finished free-text game read again by an observer: the transcript it ended with, shown as the game showed it,
or with the parties' labels swapped and the models named (the judging panel's variants, ``design.judging``).

The read is the observer's turn of the game after its last party message: the same instructions and the same
transcript request (``prompts.prompt``), so a read of the game as played, names hidden, is word for word the request
of the game's final verdict. The read's config ends the game on that verdict (``max_turns`` is the transcript's
length), so a verdict of no agreement ends it too: the panel never asks a party for another message. A swap
exchanges the two parties' labels (the party that opened is shown as the other one); the messages keep their order,
since reordering a conversation changes what was said (ours: seed 004 has no panel).
"""

from __future__ import annotations

from bargain_ray.core.records import GameRecord
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import Said, State
from bargain_ray.games.freetext.records import FreeTextOutcome, FreeTextTurn, MessageTurn


def transcript(record: GameRecord) -> tuple[Said, ...]:
    """The party messages of a finished game, in order, as its engine recorded them."""
    said = []
    for turn in record.turns:
        if not turn.valid:
            continue
        fields = FreeTextTurn.of(turn.fields)
        if isinstance(fields, MessageTurn):
            said.append(Said(turn=fields.party_turn, role=turn.role, text=fields.message, sentences=fields.sentences,
                             words=fields.words))
    return tuple(said)


def final_verdict(record: GameRecord) -> str | None:
    """The allocation type the game's observer gave last (the recorded outcome), None when it gave none."""
    return None if record.outcome.scored.blank else FreeTextOutcome.of(record.outcome.scored).allocation_type


def reading_config(config: FreeTextConfig, parties: int, swapped: bool = False,
                   models: dict[str, str] | None = None) -> FreeTextConfig:
    """``config`` as a read of a transcript of ``parties`` party messages shows it: the two labels exchanged when
    ``swapped``, each label followed by its party's model in brackets when ``models`` (role -> model) is given, and
    the game ended on the read's verdict."""
    labels = [p.label for p in config.parties.values()]
    if swapped:
        labels.reverse()
    shown = {
        role: party.model_copy(update={"label": label + (f" ({models[role]})" if models else "")})
        for (role, party), label in zip(config.parties.items(), labels, strict=True)
    }
    return config.model_copy(update={"parties": shown, "max_turns": max(parties, 1)})


def reading_state(config: FreeTextConfig, record: GameRecord) -> State:
    """The game after its last party message, before any verdict: what a read asks the observer to judge."""
    said = transcript(record)
    return State(first_speaker=said[0].role if said else next(iter(config.parties)), transcript=said)
