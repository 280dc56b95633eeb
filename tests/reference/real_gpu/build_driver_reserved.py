"""Writes `driver_reserved.csv`: what the NVIDIA driver reserves on idle GPUs.

Each row is one GPU's "FB Memory Usage" block (Total, Reserved, Used) from
`nvidia-smi -q` output that thamada/gls keeps, captured on real machines,
in its `gls/*_smi.py` files (a Python string per GPU model):

    python build_driver_reserved.py --gls /path/to/gls/.git > driver_reserved.csv

`crates/vramfit-core/src/driver_reserve.rs` holds the same numbers for the
GPU presets and a test holds the two to each other. Only the standard
library is needed.
"""

import argparse
import csv
import re
import subprocess
import sys

COMMIT = "e20f22d0eec076b6eeed628fdb1312d84a6fb663"
URL = "https://github.com/thamada/gls/blob/{commit}/{path}"

# NVML's product name -> the vramfit GPU preset it stands for. Products
# without a preset (GH200, H100 NVL, RTX A6000, ...) are written with an
# empty preset: they are readings all the same.
PRESETS = {
    "NVIDIA GeForce RTX 3080": "rtx-3080-10gb",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 5090": "rtx-5090",
    "Tesla V100-SXM2-16GB": "v100-16gb",
    "NVIDIA A10": "a10",
    "NVIDIA A100-SXM4-80GB": "a100-80gb",
    "NVIDIA L4": "l4",
    "NVIDIA L40S": "l40s",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H200": "h200",
}

COLUMNS = [
    "preset", "product", "driver", "total_mib", "reserved_mib", "used_mib",
    "ecc", "virtualization", "source_url", "quote",
]

BLOCK = re.compile(
    r"Product Name\s*:\s*(?P<product>.+?)\n.*?"
    r"Virtualization Mode\s*:\s*(?P<virt>\S+).*?"
    r"FB Memory Usage\s*\n\s*Total\s*:\s*(?P<total>\d+) MiB\s*\n"
    r"\s*Reserved\s*:\s*(?P<reserved>\d+) MiB\s*\n\s*Used\s*:\s*(?P<used>\d+) MiB"
    r".*?ECC Mode\s*\n\s*Current\s*:\s*(?P<ecc>\S+)",
    re.S,
)


def git(repo, *args):
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def rows(repo):
    files = git(repo, "ls-tree", "-r", "--name-only", COMMIT).split()
    for path in sorted(f for f in files if f.startswith("gls/") and f.endswith("_smi.py")):
        text = git(repo, "show", f"{COMMIT}:{path}")
        driver = re.search(r"Driver Version\s*:\s*(\S+)", text)
        # The first GPU of the file: multi-GPU machines repeat the same block.
        m = BLOCK.search(text)
        if not driver or not m:
            continue  # not NVIDIA (rocm-smi) or printed before R510 (no Reserved line)
        product = m["product"].strip()
        yield dict(
            preset=PRESETS.get(product, ""),
            product=product,
            driver=driver.group(1),
            total_mib=m["total"],
            reserved_mib=m["reserved"],
            used_mib=m["used"],
            ecc=m["ecc"],
            virtualization=m["virt"],
            source_url=URL.format(commit=COMMIT, path=path),
            quote=f"Total : {m['total']} MiB / Reserved : {m['reserved']} MiB / "
            f"Used : {m['used']} MiB",
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gls", required=True, help="a thamada/gls git directory")
    args = p.parse_args()
    w = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows(args.gls):
        w.writerow(row)


if __name__ == "__main__":
    main()
