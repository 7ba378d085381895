"""The capture notebook runs top to bottom and shows what it promises (executed with nbclient)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "decode_capture.ipynb"


def test_decode_capture_notebook_runs_and_plots() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )  # fmt: skip
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # latency per protocol, throughput over time
    texts = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    for protocol in ("durable", "pravega", "rustlog", "s2s", "s3p"):
        assert protocol in texts
    assert "Append(" in texts  # the rich repr of a typed event
    # One definition with `s3p-codec stats`: nearest-rank percentiles from capture.summarize
    # (not pandas' interpolated describe()), and the notebook asserts the byte totals agree.
    assert "latency_p50_ms" in texts
    assert "describe()" not in "".join(c.source for c in notebook.cells if c.cell_type == "code")
