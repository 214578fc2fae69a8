"""The CI and release workflows keep their rules (every step a task of scripts/tasks.py,
actions pinned, least privilege, the three OSes), and the tasks they run that can run
here do what the workflows rely on. GitHub Actions itself cannot run here."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.paths import ROOT
from tests.helpers.script_modules import tasks_module

WORKFLOWS = ROOT / ".github" / "workflows"
OSES = {"ubuntu-22.04", "windows-2022", "macos-14"}
TASK_CALL = re.compile(r"python scripts/tasks\.py ([a-z0-9-]+)(?: .*)?")


def _workflow(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _jobs() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path.name, job_id, job)
        for path in sorted(WORKFLOWS.glob("*.yml"))
        for job_id, job in _workflow(path.name)["jobs"].items()
    ]


def test_both_workflows_are_there() -> None:
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == ["ci.yml", "release.yml"]


def test_every_run_step_is_a_task_of_tasks_py() -> None:
    """What CI runs is what a Windows user without make runs."""
    tasks = tasks_module().TASKS
    runs = 0
    for name, job_id, job in _jobs():
        for step in job["steps"]:
            if "run" in step:
                runs += 1
                found = TASK_CALL.fullmatch(step["run"].strip())
                assert found, f"{name} {job_id}: {step['run']!r} is not a tasks.py call"
                assert found.group(1) in tasks, f"{name} {job_id}: no task {found.group(1)}"
            else:
                assert "uses" in step, f"{name} {job_id}: {step}"
    assert runs > 10


def test_every_action_is_pinned_to_a_commit_with_its_version() -> None:
    lines = [
        line.strip()
        for path in WORKFLOWS.glob("*.yml")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith(("uses:", "- uses:"))
    ]
    assert len(lines) >= 10
    for line in lines:
        assert re.fullmatch(r"(- )?uses: [\w-]+/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), line


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_the_app_is_built_on_the_three_oses_with_python_3_11(name: str) -> None:
    build = _workflow(name)["jobs"]["build"]
    assert build["runs-on"] == "${{ matrix.os }}"
    assert set(build["strategy"]["matrix"]["os"]) == OSES
    assert build["strategy"]["matrix"]["python"] == ["3.11"]
    tasks = [step["run"].split()[2] for step in build["steps"] if "run" in step]
    # The built app's self-test runs after the last thing that changes it.
    assert tasks.index("package") < tasks.index("self-test") == len(tasks) - 1
    uploads = [s for s in build["steps"] if s.get("uses", "").startswith("actions/upload")]
    assert uploads and uploads[0]["with"]["if-no-files-found"] == "error"


def test_ci_tests_on_every_os_and_lints_once_on_linux() -> None:
    jobs = _workflow("ci.yml")["jobs"]
    [linting] = [
        job for job in jobs.values() if any("lint" in s.get("run", "") for s in job["steps"])
    ]
    assert linting["runs-on"] == "ubuntu-22.04"
    assert "python scripts/tasks.py test" in [s.get("run") for s in jobs["build"]["steps"]]


def test_every_job_has_a_timeout() -> None:
    for name, job_id, job in _jobs():
        assert isinstance(job.get("timeout-minutes"), int), f"{name} {job_id}"


def test_permissions_are_least_privilege() -> None:
    for name in ("ci.yml", "release.yml"):
        assert _workflow(name)["permissions"] == {"contents": "read"}, name
    granted = {
        (name, job_id): job["permissions"] for name, job_id, job in _jobs() if "permissions" in job
    }
    assert granted == {("release.yml", "release"): {"contents": "write"}}


def test_checkout_keeps_no_credentials_and_only_ci_caches() -> None:
    for name, job_id, job in _jobs():
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, f"{name} {job_id}"
            if uses.startswith("actions/setup-python@"):
                cache = step["with"].get("cache")
                if name == "ci.yml":
                    assert cache == "pip"
                    assert "locks/app.txt" in step["with"]["cache-dependency-path"].split()
                else:  # a release never restores a cache a branch could have written
                    assert cache is None, f"{name} {job_id}"


def test_ci_cancels_superseded_runs_and_release_never_is() -> None:
    assert _workflow("ci.yml")["concurrency"]["cancel-in-progress"] is True
    assert _workflow("release.yml")["concurrency"]["cancel-in-progress"] is False


def test_release_signs_only_when_the_secrets_exist() -> None:
    build = _workflow("release.yml")["jobs"]["build"]
    signing = [s for s in build["steps"] if s.get("run") == "python scripts/tasks.py sign"]
    assert len(signing) == 2
    for step in signing:
        assert re.search(r"env\.HAVE_\w+_CERTIFICATE == 'true'", step["if"]), step["if"]
        assert all(v.startswith("${{ secrets.") for v in step["env"].values())
    # The job sees only whether a secret exists, not its value.
    assert all("secrets." in v and "!= ''" in v for v in build["env"].values())


def _copy_tasks(root: Path, version: str, changelog: str | None) -> Path:
    """A checkout of tasks.py alone, with this version and CHANGELOG.md."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "tasks.py", root / "scripts" / "tasks.py")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text(f'"""App."""\n\n__version__ = "{version}"\n')
    if changelog is not None:
        (root / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    return root


def _task(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "tasks.py"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


CHANGELOG = """# Changelog

## [Unreleased]

- next

## [1.2.3] - 2026-01-02

- Faster.
- Ünïcødé notes.

## [1.2.2]

- old
"""


def test_release_check_accepts_the_tag_of_the_version_and_prints_its_notes(tmp_path: Path) -> None:
    root = _copy_tasks(tmp_path, "1.2.3", CHANGELOG)
    done = _task(root, "release-check", "v1.2.3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "- Faster.\n- Ünïcødé notes.\n"
    done = _task(root, "release-check", "v1.2.3", "--notes", "build/notes.md")
    assert done.returncode == 0, done.stderr
    assert (root / "build" / "notes.md").read_text(
        encoding="utf-8"
    ) == "- Faster.\n- Ünïcødé notes.\n"


@pytest.mark.parametrize(
    ("tag", "version", "changelog", "message"),
    [
        (
            "v1.2.4",
            "1.2.3",
            CHANGELOG,
            "tag 'v1.2.4' is not the app's version: app/__init__.py has 1.2.3",
        ),
        ("1.2.3", "1.2.3", CHANGELOG, "tag '1.2.3' is not the app's version"),
        ("v1.2.3rc1", "1.2.3", CHANGELOG, "tag 'v1.2.3rc1' is not the app's version"),
        ("v1.2.4", "1.2.4", CHANGELOG, "no section '## [1.2.4]'"),
        (
            "v1.2.3",
            "1.2.3",
            "## [1.2.3]\n\n## [1.2.2]\n- old\n",
            "the section '## [1.2.3]' is empty",
        ),
        ("v1.2.3", "1.2.3", None, "CHANGELOG.md not found"),
        # A version that is a prefix of another's heading is not its section.
        ("v1.2", "1.2", "## [1.2.3]\n- not 1.2\n", "no section '## [1.2]'"),
    ],
)
def test_release_check_refuses(
    tmp_path: Path, tag: str, version: str, changelog: str | None, message: str
) -> None:
    root = _copy_tasks(tmp_path, version, changelog)
    done = _task(root, "release-check", tag)
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_sha256sums_match_hashlib(tmp_path: Path) -> None:
    folder = tmp_path / "release"
    folder.mkdir()
    contents = {
        "DraftDeck-1.0-linux-x86_64.tar.gz": os.urandom(3_000_000),
        "a b.zip": b"",
        "é.zip": b"x",
    }
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    (folder / "SHA256SUMS").write_text("stale\n")  # written by an earlier run: replaced
    done = _task(ROOT, "sha256sums", str(folder))
    assert done.returncode == 0, done.stderr
    expected = "".join(
        f"{hashlib.sha256(contents[name]).hexdigest()}  {name}\n" for name in sorted(contents)
    )
    assert (folder / "SHA256SUMS").read_bytes() == expected.encode()
    assert done.stdout == expected


def test_sha256sums_refuses_an_empty_folder(tmp_path: Path) -> None:
    done = _task(ROOT, "sha256sums", str(tmp_path))
    assert done.returncode == 1 and "no files to sum" in done.stderr


@pytest.mark.parametrize(
    ("platform", "parts"),
    [
        ("linux", ("DraftDeck", "draftdeck")),
        ("win32", ("DraftDeck", "draftdeck-cli.exe")),
        ("darwin", ("DraftDeck.app", "Contents", "MacOS", "draftdeck")),
    ],
)
def test_self_test_runs_the_command_line_executable_of_each_os(
    platform: str, parts: tuple[str, ...]
) -> None:
    dist = Path("dist")
    assert tasks_module().built_app(dist, platform) == dist.joinpath(*parts)


def test_self_test_without_a_built_app_says_what_to_do(tmp_path: Path) -> None:
    done = _task(ROOT, "self-test", str(tmp_path))
    assert done.returncode == 1
    assert "not found: build it first (python scripts/tasks.py package)" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in gh is a shell script")
def test_publish_creates_the_release_with_every_file_and_the_notes(tmp_path: Path) -> None:
    root = _copy_tasks(tmp_path / "repo", "1.2.3", CHANGELOG)
    release = tmp_path / "release"
    release.mkdir()
    (release / "DraftDeck-1.2.3-linux-x86_64.tar.gz").write_bytes(b"app")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    log = tmp_path / "gh.log"
    gh.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n')
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    refused = _task(root, "publish", "v1.2.3", str(release), env=env)
    assert refused.returncode == 1 and "no SHA256SUMS" in refused.stderr and not log.exists()
    wrong = _task(root, "publish", "v9.9.9", str(release), env=env)
    assert wrong.returncode == 1 and "not the app's version" in wrong.stderr and not log.exists()

    assert _task(root, "sha256sums", str(release)).returncode == 0
    done = _task(root, "publish", "v1.2.3", str(release), env=env)
    assert done.returncode == 0, done.stderr
    notes = root / "build" / "release-notes.md"
    assert log.read_text().splitlines() == [
        *("release", "create", "v1.2.3", "--verify-tag", "--title", "DraftDeck 1.2.3"),
        *("--notes-file", str(notes)),
        str(release / "DraftDeck-1.2.3-linux-x86_64.tar.gz"),
        str(release / "SHA256SUMS"),
    ]
    assert notes.read_text(encoding="utf-8") == "- Faster.\n- Ünïcødé notes.\n"


# The README and the user guide's install page both say how to install and run.
INSTALL_TEXTS = ("README.md", "docs/guide/install.md")


@pytest.mark.parametrize("name", INSTALL_TEXTS)
def test_the_readme_lists_the_libraries_ci_installs(name: str) -> None:
    readme = (ROOT / name).read_text(encoding="utf-8")
    found = re.search(r"`sudo apt install ([^`]+)`", readme)
    assert found is not None
    assert tuple(found.group(1).split()) == tasks_module().APT_PACKAGES


@pytest.mark.parametrize("name", INSTALL_TEXTS)
def test_the_readme_commands_for_windows_are_tasks(name: str) -> None:
    readme = (ROOT / name).read_text(encoding="utf-8")
    named = set(re.findall(r"python scripts[\\/]tasks\.py ([a-z][a-z0-9-]*)", readme))
    assert {"install", "test", "package", "self-test"} <= named
    assert named <= set(tasks_module().TASKS)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_targets_run_the_tasks() -> None:
    for target, commands in {
        "run": ["run"],
        "lint": ["lint"],
        "test": ["lint", "test"],
        "package": ["package"],
    }.items():
        done = subprocess.run(
            ["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stdout.splitlines() if not line.startswith("make")]
        assert lines == [f"python3 scripts/tasks.py {c}" for c in commands], target


def _linter(name: str) -> str:
    found = Path(sys.executable).parent / (f"{name}.exe" if sys.platform == "win32" else name)
    if not found.is_file():
        pytest.skip(f"{name} is not installed (the test extra has it)")
    return str(found)


def test_the_workflow_linters_pass_ours_and_catch_a_bad_one(tmp_path: Path) -> None:
    """make lint's workflow checks can fail: an unpinned, outdated action that keeps the
    token, a tag name pasted into a shell script and a malformed timeout are findings."""
    for command in (
        [_linter("actionlint"), *map(str, sorted(WORKFLOWS.glob("*.yml")))],
        [_linter("zizmor"), "--offline", "--persona", "auditor", str(WORKFLOWS)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    workflow = (
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-22.04\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: echo ${{ github.ref_name }}\n"
    )
    (bad / "bad.yml").write_text(workflow)
    # zizmor refuses to read a workflow GitHub would reject: actionlint gets that one.
    malformed = tmp_path / "malformed.yml"
    malformed.write_text(workflow.replace("    steps:", "    timeout-minutes: soon\n    steps:"))
    zizmor = subprocess.run(
        [_linter("zizmor"), "--offline", str(bad)], capture_output=True, text=True, timeout=120
    )
    assert zizmor.returncode != 0
    for audit in ("unpinned-uses", "artipacked", "template-injection", "excessive-permissions"):
        assert audit in zizmor.stdout, zizmor.stdout
    actionlint = subprocess.run(
        [_linter("actionlint"), str(malformed)], capture_output=True, text=True, timeout=120
    )
    assert actionlint.returncode != 0
    assert "[syntax-check]" in actionlint.stdout and "[action]" in actionlint.stdout
