"""One driver per folder: the lock across real processes, and what a SIGKILL leaves."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from folders import cli
from helpers import ROOT

from bargain_ray.store import FolderLocked, Holder, hold_lock, lock_holder, read_progress, write_status
from bargain_ray.store.status import read_status

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


def test_a_running_status_whose_holder_died_reads_as_stopped(tmp_path, holder):
    write_status(tmp_path, "running", 12)
    assert read_status(tmp_path).state == "running" and read_progress(tmp_path).running.pid == holder.pid
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert '"running"' in (tmp_path / "status.json").read_text(), "the dead holder could not say it ended"
    progress = read_progress(tmp_path)
    assert read_status(tmp_path).state == progress.state == "stopped" and progress.running is None
    assert progress.note() == ("partial: its driver stopped without ending it (killed or crashed); "
                               "0 of 12 units finished, 12 still to play (0 unknown); run it again to finish it")


def test_a_holder_recorded_by_another_host_is_not_judged_dead_from_here(tmp_path):
    """With the flock free here, a record from another host may be a live driver there (flocks that do not
    cross hosts): it reads as running, marked unchecked; one from this host reads as dead."""
    elsewhere = Holder(host=f"not-{socket.gethostname()}", pid=4242, since="2026-12-01 09:00:00 UTC")
    (tmp_path / "driver.lock").write_text(elsewhere.model_dump_json())
    write_status(tmp_path, "running", 12)
    seen = lock_holder(tmp_path)
    assert seen is not None and (seen.host, seen.pid, seen.checked) == (elsewhere.host, 4242, False)
    assert read_status(tmp_path).state == "running"
    note = read_progress(tmp_path).note()
    assert note.startswith(f"partial: a sweep is running in this folder (host {elsewhere.host}, pid 4242, ")
    assert "recorded by another host, whose lock this host cannot check" in note
    with hold_lock(tmp_path):  # the flock is free: a driver may take the folder and clears the record
        pass
    assert lock_holder(tmp_path) is None and read_status(tmp_path).state == "stopped"


@pytest.mark.parametrize("where", ["file", "inside a file", "/proc/self"])
def test_a_sweep_folder_that_cannot_be_one_is_refused_in_one_line_before_anything_runs(tmp_path, where):
    """A run.dir that is a file (or lies under one, or is /proc/self) ended in a 27-35 line traceback."""
    file = tmp_path / "results.csv"
    file.write_text("a,b\n")
    folder = {"file": file, "inside a file": file / "sweep", "/proc/self": Path("/proc/self")}[where]
    why = {"file": "it is a file, not a folder", "inside a file": "a part of its path is a file, not a folder",
           "/proc/self": "No such file or directory"}[where]
    done = cli("bargain_ray", "+grid=demo", f"run.dir={folder}")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: {folder} cannot be written ({why}); nothing was run. Make it writable, or choose "
                           "another folder with run.dir=<path>.\n")
    assert file.read_text() == "a,b\n"
