"""The engine renders chat prompts itself, under the template budget: a hostile template
is that pack's error message, never a hang in MNN's renderer; and a worker whose
parent is killed does not run on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from app.core.infra.errors import EngineError
from app.core.pack.chat_format import UNRENDERABLE
from app.engine.client.engine_client import EngineClient
from app.engine.client.worker_process import worker_command
from app.engine.protocol import Generate, Load
from app.engine.worker.mnn_llm import MnnLlm
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
NESTED_LOOPS = "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}"
CONVERSATIONS = (
    [{"role": "user", "content": "Hi"}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "<think>\nx\n</think>\n\nHi there."},
        {"role": "user", "content": "2+2?"},
    ],
)


def _with_template(bundle_copy: Copy, template: str) -> Path:
    pack = bundle_copy("qwen3-target")
    config = json.loads((pack / "llm_config.json").read_text())
    config["jinja"]["chat_template"] = template
    (pack / "llm_config.json").write_text(json.dumps(config))
    return pack


@pytest.mark.parametrize("name", ["qwen3-target", "era-3.1.4", "era-3.3.0", "era-3.6.1"])
def test_the_prompt_is_the_one_mnn_renders(name: str, fixture_bundle: Fixture) -> None:
    llm = MnnLlm(fixture_bundle(name), {"thread_num": 1})
    try:
        for messages in CONVERSATIONS:
            ours = llm.chat_prompt(messages)
            assert ours == llm._c.apply_chat_template(messages)
            assert ours.endswith("<|im_start|>assistant\n")
    finally:
        llm.close()


def test_a_hostile_template_is_an_error_for_its_pack(
    client: EngineClient, bundle_copy: Copy
) -> None:
    pack = _with_template(bundle_copy, NESTED_LOOPS)
    client.run(Load(target=str(pack), target_config={"thread_num": 1}), timeout=120)
    with pytest.raises(EngineError) as caught:
        client.run(Generate(prompt="Hi", max_tokens=4), timeout=120)
    assert f"{UNRENDERABLE}: it takes more than" in str(caught.value)
    done = client.run(Generate(prompt="Hi", chat=False, max_tokens=4), timeout=120)
    assert done.stats.tokens > 0  # the worker lives on; only the template is refused


def test_cli_generate_with_a_hostile_template_ends(bundle_copy: Copy) -> None:
    pack = _with_template(bundle_copy, NESTED_LOOPS)
    proc = run_cli(
        "generate", "--target", str(pack), "--prompt", "Hi", "--max-tokens", "4", timeout=300
    )
    assert proc.returncode == 1
    assert UNRENDERABLE in proc.stderr and "Traceback" not in proc.stderr


# A parent that starts the worker on a pipe the test keeps open: only the worker's own
# guard can see that its parent is gone (the pipe never reaches EOF).
PARENT = """
import os, subprocess, sys, time
fd = int(sys.argv[1])
worker = subprocess.Popen(sys.argv[2:], stdin=fd, stdout=subprocess.DEVNULL, pass_fds=(fd,))
print(worker.pid, flush=True)
time.sleep(3600)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="pass_fds: POSIX only")
def test_a_worker_whose_parent_is_killed_exits() -> None:
    read_end, write_end = os.pipe()
    try:
        parent = subprocess.Popen(
            [sys.executable, "-c", PARENT, str(read_end), *worker_command()],
            stdout=subprocess.PIPE,
            text=True,
            pass_fds=(read_end,),
        )
        assert parent.stdout is not None
        worker = psutil.Process(int(parent.stdout.readline()))
        os.close(read_end)
        time.sleep(1.0)  # let it start its guard
        assert worker.is_running()
        parent.kill()  # SIGKILL: nothing of the parent's runs on
        parent.wait(30)
        parent.stdout.close()
        try:
            worker.wait(60)  # a guard against a hang, not a speed limit
        except psutil.TimeoutExpired:
            worker.kill()
            pytest.fail("the worker ran on after its parent was killed")
    finally:
        os.close(write_end)
