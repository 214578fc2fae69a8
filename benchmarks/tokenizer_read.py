"""Reading a Qwen3-sized tokenizer file: header, sha256 and the added tokens.

`read_tokenizer_info` walks the vocabulary (151,936 entries at Qwen3's size) by its
length fields to reach the added tokens, once per distinct file content; later reads of
the same content (every pack of a family, a pair loading) only read and hash the file.
Measured on a synthetic `tokenizer.mtok` with Qwen3's counts (tests/helpers/mtok.py) and
on the committed real-tokenizer fixture when it exists. Figures, interleaved, medians:

- first read (parse) and a repeated read, in ms;
- repeated read / (read the bytes + sha256): near 1 when the cache works.

    .venv/bin/python benchmarks/tokenizer_read.py
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.pack import tokenizer_info  # noqa: E402
from tests.helpers.mtok import qwen3_shaped  # noqa: E402

REALTOK = ROOT / "tests" / "fixtures" / "bundles" / "qwen3-realtok" / "tokenizer.mtok"


def _ms(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def _cold(path: Path) -> float:
    tokenizer_info._BODIES.clear()
    return _ms(lambda: tokenizer_info.read_tokenizer_info(path))


def _hash_only(path: Path) -> float:
    return _ms(lambda: hashlib.sha256(path.read_bytes()).hexdigest())


def measure(path: Path, runs: int = 15) -> None:
    info = tokenizer_info.read_tokenizer_info(path)
    cold, warm, hashed = [], [], []
    for _ in range(runs):
        cold.append(_cold(path))
        warm.append(_ms(lambda: tokenizer_info.read_tokenizer_info(path)))
        hashed.append(_hash_only(path))
    size = path.stat().st_size / 1e6
    print(f"{path.parent.name}/{path.name}: {size:.1f} MB, {len(info.added_tokens)} added tokens")
    print(f"  first read (parse):     {statistics.median(cold):6.1f} ms")
    print(f"  repeated read (cached): {statistics.median(warm):6.1f} ms")
    print(f"  read bytes + sha256:    {statistics.median(hashed):6.1f} ms")
    ratio = statistics.median(w / h for w, h in zip(warm, hashed, strict=True))
    print(f"  repeated / read+sha256: {ratio:.2f} (1.0 = the parse is not repeated)")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        synthetic = Path(tmp) / "qwen3-shaped" / "tokenizer.mtok"
        synthetic.parent.mkdir()
        synthetic.write_bytes(qwen3_shaped().to_bytes())
        measure(synthetic)
    if REALTOK.is_file():
        measure(REALTOK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
