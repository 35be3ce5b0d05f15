"""The GPU check's own arithmetic, and its clear refusal where there is no GPU."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import kernels_cuda  # noqa: E402


@pytest.mark.parametrize("name,gbps", [("NVIDIA H200", 4800), ("NVIDIA GH200 480GB", 4000),
                                       ("NVIDIA H100 80GB HBM3", 3350), ("NVIDIA H100 PCIe", 2000),
                                       ("NVIDIA A100-SXM4-80GB", 2039), ("NVIDIA A100-SXM4-40GB", 1555),
                                       ("NVIDIA L40S", 864), ("NVIDIA L4", 300), ("NVIDIA A10G", 600),
                                       ("Some Future GPU", None)])
def test_the_roofline_peak_is_looked_up_by_the_most_specific_device_name(name, gbps):
    assert kernels_cuda.peak_gbps(name) == gbps


def test_decode_bytes_count_each_cached_k_and_v_once_plus_q_and_out():
    # batch 2, context 10, 4 query heads over 2 KV heads, head_dim 8, bf16 (2 bytes)
    assert kernels_cuda.decode_bytes(2, 10, 4, 2, 8, 2) == 2 * (2 * 10 * 2 * 8 + 2 * 4 * 8) * 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks what happens on a machine without a GPU")
def test_gpu_check_says_plainly_that_there_is_no_gpu_and_writes_no_report(tmp_path):
    report = tmp_path / "report.md"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), str(report)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "no CUDA GPU here" in done.stderr and "nothing was checked" in done.stderr
    assert not report.exists()
