"""Analysis of a finished sweep: per-game metrics, cells with bootstrap CIs,
operational figures, the dataset export and the HTML report.

Families plug in through their ``metrics`` module: ``per_game(record)`` (and
optionally ``per_turn(record)``) give the family's columns; nothing here names
a family's figures except the exact agreement space of multi-issue games.
"""
