"""What a riskapi process does not import: pandas, which pyarrow imports at its first conversion of Python
values where it is installed (0.2–0.3 s a process that writes Parquet or the panel, for nothing)."""
from __future__ import annotations

import subprocess
import sys

from .conftest import TINY

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
