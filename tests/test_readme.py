"""The Python examples in README.md run, and the README's two commands are the ones CI runs."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_blocks_run(code, capsys):
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_ci_runs_the_readme_test_command():
    bash_blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    test_command = next(b.strip() for b in bash_blocks if "pytest" in b)
    assert test_command in (ROOT / ".ci" / "run").read_text()
    assert any(b.strip() == "pip install -e . && symq check" for b in bash_blocks)


def test_readme_claims_files_check(tmp_path, capsys):
    """Every claims file shown in the README runs and its claims hold."""
    import json

    from symq.cli import main

    blocks = re.findall(r"```toml\n(.*?)```", README, flags=re.S)
    assert len(blocks) >= 2
    for i, block in enumerate(blocks):
        path = tmp_path / f"readme_claims_{i}.toml"
        path.write_text(block)
        assert main(["check", str(path), "--json"]) == 0
        verdicts = json.loads(capsys.readouterr().out)
        assert verdicts and all(v["status"] == "holds" for v in verdicts), verdicts
