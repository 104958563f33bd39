"""Execution on Ray: the only package that imports Ray (besides the clients' cluster-wide limiter).

``sweep`` runs one sweep end to end; ``plan`` reads the design and the folder
once; ``driver`` is the loop that submits batches and journals results;
``pool`` holds the worker actors; ``worker`` is the actor that plays games;
``calljournal`` journals and replays paid replies; ``budget`` caps what they cost;
``batcher`` gathers requests into provider batches (``run.batch_api``);
``signals`` turns SIGINT/SIGTERM into a stop the loop reads; ``progress`` keeps totals,
the summary and the exit code.
"""

from bargain_ray.execution.sweep import run_sweep, sweep_dir

__all__ = ["run_sweep", "sweep_dir"]
