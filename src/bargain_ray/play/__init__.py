"""Playing one game: the loop shared by every family, and re-scoring a recorded transcript."""

from bargain_ray.play.loop import play
from bargain_ray.play.rescore import ReplayFile, replay_transcript

__all__ = ["ReplayFile", "play", "replay_transcript"]
