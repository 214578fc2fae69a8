"""The added tokens of a tokenizer file, read the way MNN reads them (added_tokens.py)."""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main
from app.core.infra.errors import TokenizerError
from app.core.pack.added_tokens import AddedToken
from app.core.pack.bundle import read_bundle
from app.core.pack.tokenizer_info import TokenizerInfo, read_tokenizer_info
from tests.helpers import mtok
from tests.helpers.mtok import Mtok

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
# tests/fixtures/README.md: <think> and </think> are added but not special.
QWEN3_ADDED = [
    (1200, "<|endoftext|>", True),
    (1201, "<|im_start|>", True),
    (1202, "<|im_end|>", True),
    (1203, "<think>", False),
    (1204, "</think>", False),
]
SECTIONS = [
    "normalizer",
    "pre-tokenizer",
    "model",
    "model vocabulary",
    "model merges",
    "decoder",
    "added tokens",
    "chat template",
    "eos token",
    "bos token",
]
TOY_ADDED = [
    AddedToken(5, "<|im_end|>", special=True),
    AddedToken(6, "<think>", special=False, lstrip=True),
    AddedToken(7, "</think>", special=False, rstrip=True),
    AddedToken(8, "<tool_call>", special=False),
]


def _read(path: Path, data: bytes) -> TokenizerInfo:
    path.write_bytes(data)
    return read_tokenizer_info(path)


def _toy(**changes: object) -> Mtok:
    vocab = [b"a", b"b", b"ab", b"\xc4\xa0", b"hello"]
    base = Mtok(mtok.bpe_model(vocab, merges=2), TOY_ADDED, special_ids=[5], stop_ids=[5])
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def _section(error: TokenizerError) -> str:
    """The section an error names: the longest known name after "in the"/"inside the"."""
    named = [s for s in SECTIONS if f"the {s} " in error.problem or f"the {s}:" in error.problem]
    assert named, error.problem
    return max(named, key=len)


# -- the committed fixtures ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["qwen3-target", "qwen3-draft-noisy", "fast-target"])
def test_qwen3_fixture_added_tokens(name: str, fixture_bundle: Fixture) -> None:
    info = read_tokenizer_info(fixture_bundle(name) / "tokenizer.mtok")
    assert [(t.id, t.text, t.special) for t in info.added_tokens] == QWEN3_ADDED
    assert not any(t.lstrip or t.rstrip for t in info.added_tokens)
    # The header's special ids are exactly the added tokens marked special.
    assert set(info.special_ids) == {t.id for t in info.added_tokens if t.special}
    assert info.eos_text == "<|im_end|>"
    assert info.token_id("<think>") == 1203 and info.token_text(1204) == "</think>"
    assert info.token_id("think") is None and info.token_text(500) is None
    assert info.added_bytes[1203] == b"<think>" and 500 not in info.added_bytes
    assert info.file_stop_ids == (1202,)
    assert info.stop_ids == (1202,)
    assert [s.to_json() for s in info.stop_tokens] == [
        {
            "id": 1202,
            "text": "<|im_end|>",
            "source": "tokenizer.mtok",
            "sources": ["tokenizer.mtok", "tokenizer.mtok eos_token"],
        }
    ]


def test_qwen35_fixture_added_tokens(fixture_bundle: Fixture) -> None:
    info = read_tokenizer_info(fixture_bundle("qwen35-draft") / "tokenizer.mtok")
    texts = {t.id: (t.text, t.special) for t in info.added_tokens}
    assert texts == {
        1500: ("<|endoftext|>", True),
        1501: ("<|im_start|>", True),
        1502: ("<|im_end|>", True),
        1503: ("<think>", False),
        1504: ("</think>", False),
        1505: ("<|vision_start|>", True),
        1506: ("<|vision_end|>", True),
        1507: ("<|image_pad|>", True),
        1508: ("<|video_pad|>", True),
    }
    assert set(info.special_ids) == {t.id for t in info.added_tokens if t.special}
    assert info.stop_ids == (1502,)


def test_fixture_truncated_before_its_added_tokens_end(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    data = (fixture_bundle("qwen3-target") / "tokenizer.mtok").read_bytes()
    last = struct.pack("<IBBBH", 1204, 0, 0, 0, 8) + b"</think>"
    added_end = data.index(last) + len(last)
    body = data.index(b"1202\n") + 5
    path = tmp_path / "tokenizer.mtok"
    seen = []
    for cut in [*range(body, added_end, 97), *range(added_end - 120, added_end)]:
        with pytest.raises(TokenizerError) as caught:
            _read(path, data[:cut])
        assert caught.value.path == path and str(path) in str(caught.value)
        seen.append(_section(caught.value))
    assert {"normalizer", "model vocabulary", "model merges", "added tokens"} <= set(seen)
    # Cut right after the added tokens: older writers stopped there, and MNN reads it.
    assert [t.text for t in _read(path, data[:added_end]).added_tokens][-1] == "</think>"


def test_broken_tokenizer_makes_the_bundle_unreadable(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    path = pack / "tokenizer.mtok"
    path.write_bytes(path.read_bytes()[:20_000])
    with pytest.raises(TokenizerError) as caught:
        read_bundle(pack)
    assert caught.value.path == path
    assert "truncated" in caught.value.problem


def test_info_json_reports_a_broken_tokenizer(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = bundle_copy()
    path = pack / "tokenizer.mtok"
    path.write_bytes(path.read_bytes()[:20_000])
    assert main(["info", str(pack), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "bad_tokenizer" and error["file"] == str(path)


# -- the format, on files written like llmexport writes them ---------------------------------


def test_every_cut_is_an_error_in_the_right_section_or_a_whole_file(tmp_path: Path) -> None:
    toy = _toy()
    data = toy.to_bytes()
    header = len(toy.header())
    required_end = len(data) - len(toy.tail())
    template = len(toy.chat_template or "")
    # The optional parts may each be missing, as MNN reads them: after the added tokens,
    # the chat template, the eos token and the flags byte a file may end.
    whole = {required_end + n for n in (0, 4 + template, 4 + template + 2 + 10)}
    whole |= {required_end + 4 + template + 2 + 10 + 1, len(data)}
    path = tmp_path / "tokenizer.mtok"
    order = []
    for cut in range(header, len(data) + 1):
        try:
            info = _read(path, data[:cut])
        except TokenizerError as exc:
            assert cut not in whole
            assert exc.path == path and str(path) in str(exc)
            order.append(SECTIONS.index(_section(exc)))
        else:
            assert cut in whole, cut
            assert info.added_tokens == tuple(TOY_ADDED)
    assert order == sorted(order)  # the error moves through the sections with the cut
    assert {SECTIONS[i] for i in order} == set(SECTIONS)


CORRUPT = [
    ("normalizer", b"\x09", "unknown normalizer type 9"),
    ("pre_tokenizer", b"\x07", "unknown pre-tokenizer type 7"),
    ("model", b"\x03" + bytes(20), "unknown model type 3"),
    ("decoder", b"\x08", "unknown decoder type 8"),
    ("normalizer", b"\x04" + struct.pack("<I", 2**32 - 1), "sequence count"),
    ("model", struct.pack("<BI", 0, 2**32 - 1) + bytes(6), "vocabulary count"),
    ("model", struct.pack("<BIBBI", 0, 0, 0, 0, 2**31), "merge count"),
]


@pytest.mark.parametrize(("part", "value", "words"), CORRUPT, ids=[c[2] for c in CORRUPT])
def test_corrupt_parts_are_named(part: str, value: bytes, words: str, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.mtok"
    with pytest.raises(TokenizerError) as caught:
        _read(path, _toy(**{part: value}).to_bytes())
    assert caught.value.path == path
    assert words in caught.value.problem
    assert str(path) in str(caught.value)


def test_sequences_nested_too_deep(tmp_path: Path) -> None:
    nested = b"\x00"
    for _ in range(40):
        nested = b"\x04" + struct.pack("<I", 1) + nested
    with pytest.raises(TokenizerError, match="nested more than 16 deep"):
        _read(tmp_path / "tokenizer.mtok", _toy(normalizer=nested).to_bytes())


def test_added_token_that_is_not_utf8(tmp_path: Path) -> None:
    data = _toy().to_bytes().replace(b"<think>", b"<thi\xffk>")
    with pytest.raises(TokenizerError, match="added token 6 is not UTF-8"):
        _read(tmp_path / "tokenizer.mtok", data)


def test_trailing_bytes_and_old_writers_without_a_tail(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.mtok"
    assert _read(path, _toy(trailing=b"\x00junk").to_bytes()).added_tokens == tuple(TOY_ADDED)
    old = _read(path, _toy(chat_template=None).to_bytes())
    assert old.added_tokens == tuple(TOY_ADDED) and old.eos_text is None


def _seq(kind: int, *children: bytes) -> bytes:
    return bytes([kind]) + struct.pack("<I", len(children)) + b"".join(children)


VOCAB = [b"[UNK]", b"a", b"##b", b"hello", b"\xe2\x96\x81x"]
SHAPES = {
    "wordpiece, bert normalizer stripping accents": {
        "model": mtok.wordpiece_model(VOCAB),
        "normalizer": b"\x07\x01\x01\x01\x01" + mtok.norm_table([(0xE9, b"e\xcc\x81")]),
        "pre_tokenizer": b"\x05",
        "decoder": b"\x03" + mtok.pack_str("##") + b"\x01",
    },
    "unigram, metaspace": {
        "model": mtok.unigram_model(VOCAB),
        "normalizer": _seq(4, b"\x02" + mtok.pack_str("\u2581"), b"\x03" + mtok.pack_str(" ") * 2),
        "pre_tokenizer": b"\x03" + mtok.pack_str("\u2581") + b"\x01",
        "decoder": _seq(
            7,
            b"\x05" + mtok.pack_str("\u2581") + mtok.pack_str(" "),
            b"\x01",
            b"\x04",
            b"\x06" + mtok.pack_str(" ") + struct.pack("<II", 1, 0),
            b"\x02" + mtok.pack_str("\u2581") + b"\x01",
        ),
    },
    "bpe, every normalizer and pre-tokenizer": {
        "model": mtok.bpe_model(VOCAB, merges=3, byte_level=True),
        "normalizer": _seq(
            4,
            b"\x00",
            b"\x01",
            b"\x05\x00\x00\x00\x01",
            b"\x06" + mtok.norm_table([(0xFB01, b"fi"), (0x2126, "Ω".encode())]),
            b"\x07\x01\x01\x00\x01",
            b"\x08\x01\x01",
        ),
        "pre_tokenizer": _seq(
            6,
            b"\x00",
            b"\x01\x01",
            b"\x02\x01",
            b"\x04" + mtok.pack_str(r"\s+") + b"\x00\x01",
            b"\x05",
            _seq(6, b"\x01\x00"),
        ),
    },
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_other_models_normalizers_and_decoders(shape: str, tmp_path: Path) -> None:
    info = _read(tmp_path / "tokenizer.mtok", _toy(**SHAPES[shape]).to_bytes())
    assert info.added_tokens == tuple(TOY_ADDED)
    assert info.eos_text == "<|im_end|>"


def _check_qwen3_added(info: TokenizerInfo) -> None:
    assert [(t.text, t.special) for t in info.added_tokens] == list(mtok.QWEN3_ADDED)
    assert [t.id for t in info.added_tokens] == list(range(151_643, 151_669))
    assert info.token_id("<|endoftext|>") == 151_643
    assert info.token_id("<think>") == 151_667 and info.token_id("</think>") == 151_668
    assert info.file_stop_ids == (151_645,)


def test_qwen3_sized_vocabulary(tmp_path: Path) -> None:
    info = _read(tmp_path / "tokenizer.mtok", mtok.qwen3_shaped().to_bytes())
    _check_qwen3_added(info)
    assert info.stop_ids == (151_645,)


def test_real_qwen3_tokenizer(fixture_bundle: Fixture) -> None:
    info = read_tokenizer_info(fixture_bundle("qwen3-realtok") / "tokenizer.mtok")
    _check_qwen3_added(info)
    assert set(info.special_ids) == {t.id for t in info.added_tokens if t.special}
    assert info.eos_text == "<|im_end|>"


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.integers(0, 10**6),
)
def test_damaged_files_raise_only_tokenizer_errors(
    edits: list[tuple[int, int]], cut: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    toy = _toy(model=SHAPES["bpe, every normalizer and pre-tokenizer"]["model"])
    data = bytearray(toy.to_bytes())
    header = len(toy.header())
    for where, value in edits:
        data[header + where % (len(data) - header)] = value
    data = data[: header + cut % (len(data) - header + 1)]
    path = tmp_path_factory.mktemp("mtok") / "tokenizer.mtok"
    try:
        _read(path, bytes(data))
    except TokenizerError as exc:
        assert exc.path == path


# -- tokenizer.txt ---------------------------------------------------------------------------


def _txt(kind: int, specials: list[int], stops: list[int], vocab_lines: list[bytes]) -> bytes:
    ids = " ".join(map(str, [*specials, *stops]))
    head = f"430 {kind}\n{len(specials)} {len(stops)} 0\n{ids}\n".encode()
    return head + b"\n".join(vocab_lines) + b"\n"


def _b64(text: str) -> bytes:
    return base64.b64encode(text.encode())


def test_txt_formats_give_the_special_tokens_text(tmp_path: Path) -> None:
    words = ["a", "b", "<|endoftext|>", "<|im_end|>", "<think>"]
    path = tmp_path / "tokenizer.txt"
    tiktoken = _txt(1, [2, 3, 4], [3], [b"5", *(_b64(w) for w in words)])
    sentencepiece = _txt(0, [2, 3, 4], [3], [b"5", *(_b64(w) + b" 0.0 3" for w in words)])
    # huggingface: byte-level text per line ("Ġ" is a space), then the merges.
    huggingface = _txt(3, [2, 3, 4], [3], [b"5 1", *(w.encode() for w in words), b"a b"])
    for data in (tiktoken, sentencepiece, huggingface):
        info = _read(path, data)
        assert [(t.id, t.text, t.special) for t in info.added_tokens] == [
            (2, "<|endoftext|>", True),
            (3, "<|im_end|>", True),
            (4, "<think>", True),
        ]
        assert info.stop_ids == (3,)
        assert info.stop_tokens[0].sources == ("tokenizer.txt",)
    spaced = _read(path, _txt(3, [1], [], [b"2 0", b"a", "Ġhi".encode()]))
    assert spaced.added_tokens[0].text == " hi"


def test_txt_specials_past_the_vocabulary_are_skipped(tmp_path: Path) -> None:
    info = _read(tmp_path / "tokenizer.txt", _txt(1, [1, 9], [], [b"2", _b64("a"), _b64("<s>")]))
    assert [(t.id, t.text) for t in info.added_tokens] == [(1, "<s>")]


@pytest.mark.parametrize(
    ("vocab_lines", "words"),
    [
        ([b"many"], "vocabulary count line is not a number"),
        ([b"3", _b64("a")], "file ends after 1 of the 3 vocabulary lines"),
    ],
)
def test_broken_txt_vocabulary(vocab_lines: list[bytes], words: str, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.txt"
    with pytest.raises(TokenizerError) as caught:
        _read(path, _txt(2, [1], [], vocab_lines))
    assert caught.value.path == path and words in caught.value.problem
