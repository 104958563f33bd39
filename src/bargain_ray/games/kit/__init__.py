"""What every family would otherwise write for itself: reading JSON replies, rendering rule sentences and
repairs, turn order and failed turns, reading a strategy's request, concession tactics, the outcome space a deal
is scored against."""
