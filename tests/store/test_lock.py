"""One driver per folder: the lock across real processes, and what a SIGKILL leaves."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
from helpers import ROOT

from bargain_ray.store import FolderLocked, hold_lock, lock_holder

HOLD = "import sys, time; from pathlib import Path; from bargain_ray.store import hold_lock\n" \
       "with hold_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(120)\n"


@pytest.fixture
def holder(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_holder_is_refused_naming_the_first(tmp_path, holder):
    with pytest.raises(FolderLocked) as refused:
        with hold_lock(tmp_path):
            pytest.fail("two holders at once")
    message = str(refused.value)
    assert f"host {socket.gethostname()}, pid {holder.pid}, since " in message
    assert f"delete {tmp_path / 'driver.lock'}" in message and "\n" not in message
    seen = lock_holder(tmp_path)
    assert seen is not None and seen.pid == holder.pid


def test_a_sigkilled_holder_leaves_no_stale_lock(tmp_path, holder):
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert lock_holder(tmp_path) is None
    with hold_lock(tmp_path) as me:
        assert me.pid == os.getpid() and lock_holder(tmp_path).pid == os.getpid()
    assert lock_holder(tmp_path) is None and (tmp_path / "driver.lock").read_bytes() == b""


def test_asking_who_holds_a_folder_writes_nothing(tmp_path):
    assert lock_holder(tmp_path / "absent") is None and not (tmp_path / "absent").exists()
