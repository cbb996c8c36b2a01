"""The batch writer hands its columns to Arrow as buffers (sim/core/store.py): the arrays are
the ones ``pa.array`` would make, and writing a batch does not import pandas (pyarrow's own
constructors ask pandas about their input, about 0.2 s of CPU in every writing process)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sim.core import store


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.float32, np.float64, np.bool_]
)
def test_a_numeric_column_is_the_array_arrow_would_make(dtype):
    rows = np.zeros(7, dtype=[("a", np.int64), ("b", dtype)])
    rows["b"] = np.array([0, 1, -1, 5, 127, 3, 2]).astype(dtype)
    column = rows["b"]  # a strided view of a record array, as the writer's columns are
    made = store._numbers(column)
    assert made.equals(pa.array(column)) and made.type == pa.array(column).type


def test_names_are_the_string_array_arrow_would_make():
    names = ["random", "", "Café Ω", "greedy"]
    assert store._names(names).equals(pa.array(names, type=pa.string()))
    assert store._names([]).equals(pa.array([], type=pa.string()))


def test_writing_a_batch_imports_no_pandas(tmp_path):
    code = (
        "import sys\n"
        "from run_helpers import small_run\n"
        f"small_run({str(tmp_path / 'run')!r}, 'neom', ('random',) * 2, 2, 4, 1, events=True)\n"
        "print('pandas' in sys.modules)\n"
    )
    tests = Path(__file__).resolve().parent
    paths = [str(tests.parent), str(tests), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert (tmp_path / "run" / "events").is_dir()
