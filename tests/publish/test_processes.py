"""What a riskapi process does not import: pandas, which pyarrow imports at its first conversion of Python
values where it is installed (0.2–0.3 s a process that writes Parquet or the panel, for nothing)."""
from __future__ import annotations

import subprocess
import sys

from ..conftest import TINY
from ..waiting import wait_for

CONVERT = "import pyarrow as pa; pa.array(['a']); pa.scalar(1); "
SAYS = "import sys; print('pandas' in sys.modules)"


def python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=120).stdout.strip()


def test_pyarrow_imports_pandas_where_installed_and_a_riskapi_process_does_not():
    assert python("import pandas") == ""  # installed here (the suite's own docs examples use it)
    assert python(CONVERT + SAYS) == "True"  # what the processes avoid
    assert python("from generator.system.processes import without_pandas; without_pandas(); " + CONVERT + SAYS) == "False"
    refused = python("from generator.system.processes import without_pandas; without_pandas()\n"
                     "try:\n    import pandas\nexcept ImportError as error:\n    print(error)")
    assert refused == "pandas is not imported by riskapi's processes"


def test_the_riskapi_command_writes_parquet_without_importing_pandas(tmp_path):
    # the command's own process builds the models (one job): the Parquet exports convert there; what the
    # process had imported is printed as it exits
    said = python("import atexit, sys; atexit.register(lambda: print('pandas' in sys.modules, "
                  "'pyarrow' in sys.modules)); from generator.cli import run; "
                  f"sys.argv = ['riskapi', '-q', 'build', '--data', '{TINY}', '--site', '{tmp_path / 'site'}', '--jobs', '1']; run()")
    assert said == "False True"
    assert (tmp_path / "site" / "current" / "api" / "v1" / "exports" / "scores.parquet").is_file()


def test_children_are_the_live_children_as_a_scan_of_every_process_finds_them():
    # read from the threads' lists of children; a zombie (ended, not yet waited for) is no live child
    import os
    import signal

    from generator.system import processes
    assert processes._children_listed()  # the kernels this runs on list them: the fast path is the one tested
    mine = os.getpid()
    scan = lambda: processes._live_children(mine, (int(p) for p in os.listdir("/proc") if p.isdigit()))  # noqa: E731
    running = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
    try:
        assert {p.pid for p in running} <= processes.children(mine) == scan()
        running[0].send_signal(signal.SIGKILL)
        wait_for(lambda: processes.process_state(running[0].pid)[0] == "Z", 20, "a zombie until waited for")
        assert running[0].pid not in processes.children(mine) and running[1].pid in processes.children(mine)
        assert processes.children(mine) == scan()
    finally:
        for process in running:
            process.kill()
            process.wait()
    assert processes.children(running[1].pid) == set()  # a process gone has none
